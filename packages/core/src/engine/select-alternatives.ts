import { CairnError } from '../errors/cairn-error.js';
import type { ErrorRecord } from '../model/error-record.js';
import type { Json } from '../model/json.js';
import type { JsonifyPayload } from '../serialization/json-types.js';
import type { AnyWorkflowDefinition, WorkflowOf } from './any-workflow-definition.js';
import { checkEventName, eventNameOf, type EventDefinition } from './event-definition.js';
import { checkWakeTime, toMilliseconds, type Duration } from './duration.js';
import { checkIdentifier, IDENTIFIER_LIMITS } from './check-input.js';

/** One thing `ctx.select` waits for. */
export type SelectAlternative =
  /** The next message of this event that no wait has taken yet; it is taken only if it wins. */
  // biome-ignore lint/suspicious/noExplicitAny: events with different payload types side by side; TypeScript has no existential type
  | { event: string | EventDefinition<any> }
  /** A durable timer of this length, counted from the first execution's call. */
  | { timer: Duration }
  /** A durable timer until this time. */
  | { until: Date | number }
  /**
   * A child run started by the select, with `input` (what its definition takes; no input is
   * `null`); it is cancelled if another alternative wins.
   */
  | { child: AnyWorkflowDefinition | string; input?: unknown };

/** How a child alternative ended, as `ctx.select` gives it: `output` is the child's output after the JSON round trip (`null` for none). */
export type SelectChildValue<O = Json> = { ok: true; output: O } | { ok: false; status: 'failed' | 'cancelled' | 'deleted'; error: ErrorRecord | null };

/** The `kind` and `value` one alternative wins with. */
type SelectWin<A> = A extends { event: infer E }
  ? { kind: 'event'; value: E extends EventDefinition<infer T, infer _In> ? JsonifyPayload<T> : Json }
  : A extends { timer: unknown } | { until: unknown }
    ? { kind: 'timer'; value: null }
    : A extends { child: infer C }
      ? { kind: 'child'; value: SelectChildValue<C extends WorkflowOf<infer _I, infer O> ? JsonifyPayload<O> : Json | null> }
      : never;

/**
 * What `ctx.select(name, alternatives)` resolves with, typed by the alternatives: one member per
 * key, `winner` narrowing `kind` and `value` (an event definition's payload, a child definition's
 * output, each after the JSON round trip; `Json` for an event or child given by name).
 */
export type SelectOutcome<A extends Record<string, SelectAlternative>> = {
  [K in keyof A & string]: { winner: K } & SelectWin<A[K]>;
}[keyof A & string];

/** What `ctx.select` resolves with, for alternatives of any kind: which alternative won, and its value. */
export type SelectResult<K extends string = string> =
  | { winner: K; kind: 'event'; value: Json }
  | { winner: K; kind: 'timer'; value: null }
  | {
      winner: K;
      kind: 'child';
      value: SelectChildValue<Json | null>;
    };

/** An alternative after its arguments were checked. */
export type CheckedAlternative =
  | { key: string; kind: 'event'; event: string }
  | { key: string; kind: 'timer'; wakeAt: number }
  | { key: string; kind: 'child'; workflow: string; input: unknown };

/** At most this many alternatives: each costs a check per look at the select. */
export const MAX_SELECT_ALTERNATIVES = 16;

/**
 * Checks `ctx.select`'s alternatives (before anything is recorded) and fixes their order: the
 * order given, which also breaks ties when several are ready at one look.
 */
export function checkAlternatives(name: string, alternatives: unknown, now: number): CheckedAlternative[] {
  const what = `ctx.select(${JSON.stringify(name)})`;
  if (typeof alternatives !== 'object' || alternatives === null || Array.isArray(alternatives)) {
    throw new CairnError('INVALID_INPUT', `${what}: the alternatives must be an object of { key: alternative }`);
  }
  const entries = Object.entries(alternatives);
  if (entries.length === 0 || entries.length > MAX_SELECT_ALTERNATIVES) {
    throw new CairnError('INVALID_INPUT', `${what}: give 1 to ${MAX_SELECT_ALTERNATIVES} alternatives, got ${entries.length}`);
  }
  return entries.map(([key, alternative]): CheckedAlternative => {
    checkIdentifier(`${what} alternative key`, key, 100);
    const at = `${what} alternative ${JSON.stringify(key)}`;
    if (typeof alternative !== 'object' || alternative === null)
      throw new CairnError('INVALID_INPUT', `${at}: must be { event }, { timer }, { until } or { child, input }`);
    const fields = Object.keys(alternative);
    const has = (field: string) => fields.includes(field);
    if (has('event') && fields.length === 1)
      return { key, kind: 'event', event: checkEventName(`${at} event`, eventNameOf((alternative as { event: unknown }).event)) };
    if (has('timer') && fields.length === 1)
      return { key, kind: 'timer', wakeAt: now + toMilliseconds((alternative as { timer: Duration }).timer, `${at} timer`) };
    if (has('until') && fields.length === 1)
      return { key, kind: 'timer', wakeAt: checkWakeTime((alternative as { until: Date | number }).until, now, `${at} until`) };
    if (has('child') && fields.every((f) => f === 'child' || f === 'input')) {
      const child = (alternative as { child: AnyWorkflowDefinition | string }).child;
      const workflow = typeof child === 'string' ? child : child?.name;
      checkIdentifier(`${at} child`, workflow, IDENTIFIER_LIMITS.workflowName);
      return { key, kind: 'child', workflow, input: (alternative as { input?: unknown }).input ?? null };
    }
    throw new CairnError(
      'INVALID_INPUT',
      `${at}: must be exactly one of { event }, { timer }, { until } or { child, input }, got keys ${JSON.stringify(fields)}`,
    );
  });
}
