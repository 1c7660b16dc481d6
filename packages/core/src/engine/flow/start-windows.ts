import type { Json } from '../../model/json.js';
import { isTerminalRunStatus, type NewRun, type RunRecord } from '../../model/run.js';
import { checkIdentifier, checkOptions, invalidInput } from '../check-input.js';
import { type Duration, toMilliseconds } from '../define/duration.js';
import type { EngineRuntime } from '../engine-runtime.js';
import type { WorkflowStore } from '../../store/workflow-store.js';
import { MAX_BATCH_SIZE, type BatchOption, type DebounceOption } from './start-options.js';
import { ChainWalk, MAX_START_KEY, chainSlots, parseChainKey, startKey } from './start-chain.js';

// The inputs a window run collects are events of the run under reserved names and keys: seat n
// (1, 2, ...) is message n of SEAT, written with the event key SEAT_KEY + n, so of a start taking
// seat n and the run closing its window at seat n exactly one wins (the store's per-run event
// keys decide). The run's own input is seat 0. CLOSED records the input the run starts with.
const SEAT = '\u0001start:seat';
const SEAT_KEY = '\u0001start:seat:';
const CLOSED = '\u0001start:closed';

interface Seat {
  input?: Json;
  at: number;
  closed?: true;
}

/** A window's rules, as the run's chain kind records them. */
type Window = { kind: 'debounce'; periodMs: number } | { kind: 'batch'; maxSize: number; maxWaitMs: number };

function checkKey(what: string, key: unknown, keyMayBeFunction: boolean): void {
  if (keyMayBeFunction && typeof key === 'function') return;
  checkIdentifier(`${what} key`, key, MAX_START_KEY);
}

function checkPeriod(what: string, value: unknown): number {
  const ms = toMilliseconds(value as Duration, what);
  if (ms < 1) throw invalidInput(what, 'must be at least 1 ms', value);
  return ms;
}

/** Checks a `debounce` option (`INVALID_INPUT` otherwise). */
export function checkDebounce(what: string, value: unknown, keyMayBeFunction: boolean): void {
  if (value === undefined) return;
  const options = checkOptions(what, value, ['key', 'period']);
  checkKey(what, options['key'], keyMayBeFunction);
  checkPeriod(`${what} period`, options['period']);
}

/** Checks a `batch` option (`INVALID_INPUT` otherwise). */
export function checkBatch(what: string, value: unknown, keyMayBeFunction: boolean): void {
  if (value === undefined) return;
  const options = checkOptions(what, value, ['key', 'maxSize', 'maxWait']);
  if (options['key'] !== undefined) checkKey(what, options['key'], keyMayBeFunction);
  const size = options['maxSize'];
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_BATCH_SIZE) {
    throw invalidInput(`${what} maxSize`, `must be an integer from 1 to ${MAX_BATCH_SIZE}`, size);
  }
  checkPeriod(`${what} maxWait`, options['maxWait']);
}

function windowOf(kind: string): Window | undefined {
  const [name, a, b] = kind.split('/');
  if (name === 'debounce') return { kind: 'debounce', periodMs: Number(a) };
  if (name === 'batch') return { kind: 'batch', maxSize: Number(a), maxWaitMs: Number(b) };
  return undefined;
}

/** When a new window run of `window` created at `now` is first due. */
function firstDue(window: Window, now: number): number {
  if (window.kind === 'debounce') return now + window.periodMs;
  return window.maxSize === 1 ? now : now + window.maxWaitMs;
}

/**
 * Starts with `debounce` or `batch` (`run` without an idempotency key): the input takes a seat in
 * the newest run of the key's chain while its window is open (`created: false`), else a new run
 * is appended, due when its window would close.
 */
export async function startWindowed(
  rt: EngineRuntime,
  run: NewRun,
  option: { debounce: DebounceOption } | { batch: BatchOption },
  now: number,
): Promise<{ run: RunRecord; created: boolean }> {
  let window: Window;
  let kind: string;
  let key: string;
  const what = `Workflow ${JSON.stringify(run.workflow)}`;
  if ('debounce' in option) {
    window = { kind: 'debounce', periodMs: toMilliseconds(option.debounce.period) };
    kind = `debounce/${window.periodMs}`;
    key = startKey(`${what} debounce key`, option.debounce.key as (input: Json) => string, run.input);
  } else {
    window = { kind: 'batch', maxSize: option.batch.maxSize, maxWaitMs: toMilliseconds(option.batch.maxWait) };
    kind = `batch/${window.maxSize}/${window.maxWaitMs}`;
    key = option.batch.key === undefined ? '' : startKey(`${what} batch key`, option.batch.key as (input: Json) => string, run.input);
  }
  const walk = new ChainWalk(rt, chainSlots(rt, window.kind), { workflow: run.workflow, kind, key });
  for (;;) {
    const newest = await walk.toEnd(now);
    const seat = newest === undefined || isTerminalRunStatus(newest.status) ? undefined : await takeSeat(rt, newest.id, window, run.input, now);
    if (newest !== undefined && seat !== undefined) {
      // The last seat of a batch: the run starts now, not at its maxWait.
      if (window.kind === 'batch' && seat === window.maxSize - 1) await rt.dispatchRun(newest);
      await walk.movePointer(newest);
      return { run: newest, created: false };
    }
    const due = firstDue(window, now);
    const created = await walk.append({ ...run, wakeAt: run.wakeAt === undefined ? due : Math.max(run.wakeAt, due) }, now);
    if (created !== undefined) return { run: created, created: true };
  }
}

/** The number of seats taken in the run (its seat messages are numbered 1, 2, ... without gaps): a few reads. */
async function seatCount(rt: EngineRuntime, runId: string): Promise<number> {
  const has = async (n: number) => (await rt.store.events.get(runId, SEAT, n)) !== undefined;
  if (!(await has(1))) return 0;
  let low = 1;
  let high = 2;
  while (await has(high)) {
    low = high;
    high *= 2;
  }
  // Seat `low` exists, seat `high` did not: the count lies in [low, high).
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (await has(mid)) low = mid;
    else high = mid;
  }
  return low;
}

/**
 * Takes the next seat of the run's window for `input` and returns its number; `undefined` when the
 * window is closed (or full, or the run ended), so the start goes to a new run. A seat is a message written with the seat's
 * own event key: a start that finds its seat taken tries the next one, and stops at a close mark.
 */
async function takeSeat(rt: EngineRuntime, runId: string, window: Window, input: Json, now: number): Promise<number | undefined> {
  const count = await seatCount(rt, runId);
  // A close mark is always the last seat: past it no seat may be taken.
  if (count > 0 && ((await rt.store.events.get(runId, SEAT, count))?.payload as Seat | undefined)?.closed === true) return undefined;
  let n = count + 1;
  for (;;) {
    // The run's own input is the first of the batch: seats 1 .. maxSize - 1 hold the others.
    if (window.kind === 'batch' && n >= window.maxSize) return undefined;
    const seat: Seat = { input, at: now };
    const delivery = await rt.store.events.deliver(runId, SEAT, seat as unknown as Json, now, { idempotencyKey: `${SEAT_KEY}${n}` });
    if (delivery.delivered) return n;
    if (!delivery.duplicate) return undefined;
    const taken = await rt.store.events.get(runId, SEAT, delivery.seq);
    if ((taken?.payload as Seat | undefined)?.closed === true) return undefined;
    n = delivery.seq + 1;
  }
}

/** What a claimed window run does: start with `input`, or wait until `wakeAt` (its window is open). */
export type WindowTurn = { wait: false; input: Json } | { wait: true; wakeAt: number };

/**
 * At every claim of a run: a run of a debounce or batch chain starts only once its window has
 * closed, with the input the window decided (recorded once, read again by every later claim);
 * any other run starts with its own input. The window is closed by taking the next seat with a
 * close mark, so no start can take a seat after the inputs were read.
 */
export async function windowTurn(rt: EngineRuntime, run: RunRecord): Promise<WindowTurn> {
  const chain = parseChainKey(run.idempotencyKey);
  const window = chain === undefined ? undefined : windowOf(chain.kind);
  if (window === undefined) return { wait: false, input: run.input };
  const closed = await rt.store.events.get(run.id, CLOSED, 1);
  if (closed !== undefined) return { wait: false, input: (closed.payload as { input: Json }).input };
  const now = rt.clock.now();
  // A run being cancelled or past its deadline only ends: its window does not hold it.
  if (run.cancelRequested || (run.deadline !== undefined && run.deadline <= now)) return { wait: false, input: run.input };
  for (;;) {
    const count = await seatCount(rt, run.id);
    const seats: Seat[] = [];
    for (let n = 1; n <= count; n++) seats.push((await rt.store.events.get(run.id, SEAT, n))!.payload as unknown as Seat);
    const marked = seats.at(-1)?.closed === true;
    const inputs = marked ? seats.slice(0, -1) : seats;
    if (!marked) {
      const opensUntil = closesAt(window, run, inputs);
      if (opensUntil > now) return { wait: true, wakeAt: opensUntil };
      const full = window.kind === 'batch' && inputs.length + 1 >= window.maxSize;
      if (!full) {
        const mark: Seat = { at: now, closed: true };
        const delivery = await rt.store.events.deliver(run.id, SEAT, mark as unknown as Json, now, { idempotencyKey: `${SEAT_KEY}${count + 1}` });
        // A start took that seat first: its input is in, and the window is looked at again.
        if (!delivery.delivered) continue;
        rt.faults.hit({ point: 'after-checkpoint', runId: run.id, stepKey: WINDOW_CLOSED });
      }
    }
    // The last start's input (the run's own when nobody else came), or every input in arrival order.
    const last = inputs.at(-1);
    const input =
      window.kind === 'debounce' ? (last === undefined ? run.input : (last.input as Json)) : [run.input, ...inputs.map((seat) => seat.input as Json)];
    await rt.store.events.deliver(run.id, CLOSED, { input }, now, { idempotencyKey: CLOSED });
    return { wait: false, input };
  }
}

/** The fault site (a `stepKey` of `after-checkpoint`) between a window's close mark and the record of its input. */
export const WINDOW_CLOSED = '\u0001start:window-closed';

/** When the window of `run` closes, given the inputs seated so far (now or earlier: it closes at once). */
function closesAt(window: Window, run: RunRecord, inputs: Seat[]): number {
  if (window.kind === 'debounce') return (inputs.at(-1)?.at ?? run.createdAt) + window.periodMs;
  if (inputs.length + 1 >= window.maxSize) return run.createdAt;
  return run.createdAt + window.maxWaitMs;
}

/**
 * The input a run's handler receives outside its claim (a queued step's worker replays the handler
 * to reach the step's body; the pre-deploy check and exports replay it too): a debounce or batch
 * run's decided input once its window closed, else the run's own. Reads only `events.get`.
 */
export async function handlerInput(store: Pick<WorkflowStore, 'events'>, run: RunRecord): Promise<Json> {
  const chain = parseChainKey(run.idempotencyKey);
  if (chain === undefined || windowOf(chain.kind) === undefined) return run.input;
  const closed = await store.events.get(run.id, CLOSED, 1);
  return closed === undefined ? run.input : (closed.payload as { input: Json }).input;
}

/** `run` with the input its handler receives (see `handlerInput`): the same object when that is its own. */
export async function withHandlerInput(store: Pick<WorkflowStore, 'events'>, run: RunRecord): Promise<RunRecord> {
  const input = await handlerInput(store, run);
  return input === run.input ? run : { ...run, input };
}
