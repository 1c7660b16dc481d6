// Type tests of issue 28 part 2: every primitive types a payload as what its JSON round trip gives
// (`Jsonify<T>`), and refuses at compile time what the engine refuses at run time (a Date, a Map, a
// class instance with methods, a function, a bigint). Checked by `pnpm typecheck` (the root
// tsconfig includes packages/*/test); nothing here runs: each `// @ts-expect-error` is an error the
// compiler must report, and `expectType` fails to compile when a type is not the one expected.
import {
  createEngine,
  createMemoryStore,
  defineEvent,
  defineWorkflow,
  type Engine,
  type Json,
  type Jsonify,
  type RunHandle,
  type WorkflowContext,
  type WorkflowDefinition,
} from '@cairn/core';
import type { StandardSchemaV1 } from '@cairn/core/backend';
import { type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';

/** Compiles only when `A` and `B` are the same type (each assignable to the other, checked both ways exactly). */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
/** Compiles only when `A` and `B` are assignable both ways (the same shape, spelled differently). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function expectType<T extends true>(): T | undefined {
  return undefined;
}

interface Order {
  id: number;
  note?: string;
  tags: readonly string[];
  lines: { sku: string; qty: number }[];
}
interface Loose {
  id: number;
  note: string | undefined;
}
type Shape = { kind: 'circle'; radius: number } | { kind: 'square'; side: number };
type Tree = { value: number; children: Tree[] };
class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
  norm(): number {
    return Math.hypot(this.x, this.y);
  }
}

declare const ctx: WorkflowContext;
declare const engine: Engine;
declare const order: Order;
declare const loose: Loose;
declare const tree: Tree;

export async function steps(): Promise<void> {
  // Primitives and JSON types come back as they went.
  expectType<Equal<Awaited<ReturnType<typeof ctx.step<string>>>, string>>();
  const text = await ctx.step('text', () => 'a');
  expectType<Equal<typeof text, string>>();
  const json = await ctx.step('json', (): Json => ({ a: [1, 'b', null] }));
  expectType<Equal<typeof json, Json>>();
  const nothing = await ctx.step('nothing', async () => {});
  expectType<Equal<typeof nothing, undefined>>();

  // An interface with an optional property, a readonly array and nested objects: the same shape.
  const o = await ctx.step('order', async () => order);
  expectType<Same<typeof o, Order>>();
  const back: Order = o;
  void back;
  const firstSku: string | undefined = o.lines[0]?.sku;
  void firstSku;
  // Readonly arrays stay readonly.
  // @ts-expect-error tags is readonly string[]
  o.tags.push('x');

  // A property typed `... | undefined` is left out when undefined: it arrives optional.
  const l = await ctx.step('loose', () => loose);
  expectType<Same<typeof l, { id: number; note?: string }>>();
  // @ts-expect-error `note` may be absent, which Loose (note required) does not allow
  const asLoose: Loose = l;
  void asLoose;
  // `undefined` array items arrive as null.
  const items = await ctx.step('items', () => ['a', undefined]);
  expectType<Equal<typeof items, (string | null)[]>>();

  // Unions keep their members, so narrowing works.
  const shape = await ctx.step('shape', (): Shape => ({ kind: 'circle', radius: 1 }));
  if (shape.kind === 'circle') expectType<Equal<typeof shape.radius, number>>();
  const maybe = await ctx.step('maybe', (): { id: number } | undefined => undefined);
  expectType<Same<typeof maybe, { id: number } | undefined>>();

  // Recursive types, unknown and any.
  const t = await ctx.step('tree', () => tree);
  expectType<Same<typeof t, Tree>>();
  const u = await ctx.step('unknown', (): unknown => null);
  expectType<Equal<typeof u, unknown>>();

  // Refused: what the engine would refuse with NOT_SERIALIZABLE, named at compile time.
  // @ts-expect-error a Date is not JSON
  await ctx.step('date', () => new Date());
  // @ts-expect-error a Date inside an object
  await ctx.step('nested date', async () => ({ order: { placedAt: new Date() } }));
  // @ts-expect-error a Map is not JSON
  await ctx.step('map', () => new Map<string, number>());
  // @ts-expect-error a Set is not JSON
  await ctx.step('set', () => ({ ids: new Set<number>() }));
  // @ts-expect-error a class instance with methods is not a plain object
  await ctx.step('class', () => new Point(1, 2));
  // @ts-expect-error a function is not JSON
  await ctx.step('function', () => ({ callback: () => 1 }));
  // @ts-expect-error a bigint is not JSON
  await ctx.step('bigint', () => ({ id: 1n }));
  // @ts-expect-error one union member with a Date is enough
  await ctx.step('union', (): { at: string } | { at: Date } => ({ at: 'now' }));
  // @ts-expect-error a Date deep in a readonly array
  await ctx.step('array', (): readonly { at: Date }[] => []);
}

const shipOrder = defineWorkflow('ship order', async (_ctx, input: { orderId: string; express?: boolean }) => ({
  orderId: input.orderId,
  trackingNo: undefined as string | undefined,
  parcels: [{ weight: 1 }],
}));

export async function workflows(): Promise<void> {
  // startRun takes the definition's input; result() gives the output's round trip.
  const handle = await engine.startRun(shipOrder, { orderId: 'o-1' });
  expectType<Same<typeof handle, RunHandle<{ orderId: string; trackingNo?: string; parcels: { weight: number }[] }>>>();
  const out = await handle.result();
  expectType<Same<typeof out, { orderId: string; trackingNo?: string; parcels: { weight: number }[] }>>();
  // @ts-expect-error the input must be the definition's
  await engine.startRun(shipOrder, { order: 'o-1' });
  // By name: any JSON input, nothing known of the output.
  const byName = await engine.startRun('ship order', { orderId: 'o-1' });
  expectType<Equal<Awaited<ReturnType<typeof byName.result>>, unknown>>();
  // @ts-expect-error by name, the input must still be JSON
  await engine.startRun('ship order', { at: new Date() });

  // @ts-expect-error a workflow's input type must be JSON
  defineWorkflow('dated input', async (_ctx, _input: { at: Date }) => null);
  // @ts-expect-error a workflow's output type must be JSON
  defineWorkflow('dated output', async () => ({ at: new Date() }));
  // @ts-expect-error a class instance as output
  defineWorkflow('class output', async () => new Point(0, 0));
  // A workflow that returns nothing.
  const quiet = defineWorkflow('quiet', async () => {});
  expectType<Equal<Awaited<ReturnType<Awaited<ReturnType<typeof engine.startRun<unknown, void>>>['result']>>, undefined>>();
  void quiet;

  // Children: the same rules inside a workflow.
  defineWorkflow('parent', async (wctx) => {
    const shipped = await wctx.child(shipOrder, { orderId: 'o-2' });
    expectType<Same<typeof shipped, { orderId: string; trackingNo?: string; parcels: { weight: number }[] }>>();
    // @ts-expect-error the child's input type
    await wctx.child(shipOrder, { orderId: 2 });
    const outcome = await wctx.childOutcome(shipOrder, { orderId: 'o-3' });
    if (outcome.ok) expectType<Same<typeof outcome.output, typeof shipped>>();
    // @ts-expect-error by name, a Date input is refused
    await wctx.child('ship order', { at: new Date() });
    const id = await wctx.startChild(shipOrder, { orderId: 'o-4' });
    expectType<Equal<typeof id, string>>();
    // @ts-expect-error continueAsNew's input is JSON
    await wctx.continueAsNew({ since: new Date() });
    return shipped.orderId;
  });
}

const approval = defineEvent<{ approvedBy: string; comment?: string }>('approval');

export async function eventsAndState(): Promise<void> {
  const a = await ctx.waitForEvent(approval);
  expectType<Same<typeof a, { approvedBy: string; comment?: string }>>();
  await engine.sendEvent('run', approval, { approvedBy: 'Ada' });
  // @ts-expect-error the payload type of the definition
  await engine.sendEvent('run', approval, { approvedBy: 7 });
  // By name, with the payload type as a type argument.
  const b = await ctx.waitForEvent<{ ok: boolean }>('confirm');
  expectType<Equal<typeof b, { ok: boolean }>>();
  const c = await ctx.waitForEvent('anything');
  expectType<Equal<typeof c, Json>>();
  // @ts-expect-error a Date payload type is refused
  await ctx.waitForEvent<{ at: Date }>('dated');
  // @ts-expect-error and so is a definition of one
  defineEvent<{ at: Date }>('dated');
  // @ts-expect-error a Date payload sent by name
  await engine.sendEvent('run', 'dated', { at: new Date() });

  const cart = await ctx.state<{ items: string[]; coupon: string | undefined }>('cart');
  expectType<Same<typeof cart, { items: string[]; coupon?: string } | undefined>>();
  // @ts-expect-error a Map as a state value type
  await ctx.state<Map<string, number>>('cart');

  // setState takes what JSON carries: optional and undefined properties are fine, a Date is not.
  await ctx.setState('cart', { items: ['a'], coupon: undefined as string | undefined });
  await ctx.setState('count', 3);
  // @ts-expect-error a Date as a state value
  await ctx.setState('seen', new Date());
  // @ts-expect-error a Map nested in a state value
  await ctx.setState('cart', { items: new Map<string, number>() });
}

export async function select(): Promise<void> {
  const first = await ctx.select('first', {
    approved: { event: approval },
    late: { timer: '1h' },
    shipped: { child: shipOrder, input: { orderId: 'o-5' } },
    other: { event: 'other' },
  });
  if (first.winner === 'approved') expectType<Same<typeof first.value, { approvedBy: string; comment?: string }>>();
  if (first.winner === 'late') expectType<Equal<typeof first.value, null>>();
  if (first.winner === 'shipped' && first.value.ok)
    expectType<Same<typeof first.value.output, { orderId: string; trackingNo?: string; parcels: { weight: number }[] }>>();
  if (first.winner === 'other') expectType<Equal<typeof first.value, Json>>();
  if (first.kind === 'timer') expectType<Equal<typeof first.winner, 'late'>>();
}

export async function schemas(): Promise<void> {
  // zod: the handler receives the schema's output, startRun takes its input.
  const signup = defineWorkflow(
    'signup',
    async (_ctx, input) => {
      expectType<Equal<typeof input, { email: string; plan: 'free' | 'pro' }>>();
      return { account: `acct:${input.email}` };
    },
    { input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']).default('free') }) },
  );
  await engine.startRun(signup, { email: 'a@example.com' });
  // @ts-expect-error the schema's input type
  await engine.startRun(signup, { mail: 'a@example.com' });

  // valibot output schema: the run ends with the schema's output.
  const total = defineWorkflow('total', async () => ({ cents: 1250 }), {
    output: v.object({ cents: v.pipe(v.number(), v.integer()), currency: v.optional(v.string(), 'EUR') }),
  });
  const sum = await (await engine.startRun(total, null)).result();
  expectType<Same<typeof sum, { cents: number; currency: string }>>();

  // ArkType for an event: sendEvent takes the schema's input, the wait receives its output.
  const paid = defineEvent('paid', { schema: type({ amount: 'number', 'reference?': 'string' }) });
  await engine.sendEvent('run', paid, { amount: 12 });
  // @ts-expect-error amount is a number
  await engine.sendEvent('run', paid, { amount: '12' });
  const p = await ctx.waitForEvent(paid);
  expectType<Same<typeof p, { amount: number; reference?: string }>>();

  // A schema may take what JSON cannot carry, as long as it gives JSON: a Date in, a string stored.
  const dated = defineWorkflow('dated', async (_ctx, input) => input.at.length, {
    input: z.object({ at: z.date().transform((d) => d.toISOString()) }),
  });
  await engine.startRun(dated, { at: new Date() });
  // @ts-expect-error but a schema that gives a Date makes the handler's input not JSON
  defineWorkflow('gives a date', async (_ctx, input) => input.at.getTime(), { input: z.object({ at: z.date() }) });

  // A hand-written Standard Schema.
  const even: StandardSchemaV1<number, number> = {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value) => (typeof value === 'number' && value % 2 === 0 ? { value } : { issues: [{ message: 'odd' }] }),
    },
  };
  const halve = defineWorkflow('halve', async (_ctx, input) => input / 2, { input: even });
  expectType<Equal<typeof halve, WorkflowDefinition<number, number, number>>>();
  // @ts-expect-error a string is not what the schema takes
  await engine.startRun(halve, 'two');
}

// Helpers written against the public types still compile: createEngine takes definitions of any types.
export const engineOfAll = createEngine({ store: createMemoryStore(), workflows: [shipOrder] });
export type ShipOutput = Jsonify<Awaited<ReturnType<typeof shipOrder.handler>>>;
