import { CairnError } from '../errors/cairn-error.js';
import type { ErrorRecord } from '../model/error-record.js';
import type { EventRecord } from '../model/event.js';
import type { Json } from '../model/json.js';
import type { NewRun, PauseChange, RunRecord, RunTransition, RetryRecord } from '../model/run.js';
import type { ScheduleRecord } from '../model/schedule.js';
import type { AttemptRecord, NewStep, StepRecord, StepTransition } from '../model/step.js';
import type { WorkflowStore } from '../store/workflow-store.js';
import { codecError, ENCODED_MARK, isPayloadEnvelope, type PayloadCodec, type PayloadContext, type PayloadEnvelope } from './payload-codec.js';

// What `RecentEncodes` keeps: payloads up to 64 KiB of JSON, 4 MiB in all.
const RECENT_MAX_BYTES = 4 * 1024 * 1024;
const RECENT_MAX_ITEM_BYTES = 64 * 1024;

/**
 * The JSON text of the payloads this wrapper encoded last, by envelope, so that reading one back
 * (every write of the contract returns the record written) costs a `JSON.parse` instead of a
 * decode: for AES-GCM, half the codec's cost of a step. Bounded by bytes; oldest forgotten first.
 * Holds nothing the engine does not hold anyway.
 */
class RecentEncodes {
  private readonly texts = new Map<string, string>();
  private bytes = 0;

  private static id(envelope: PayloadEnvelope): string {
    const data = envelope.data;
    return typeof data === 'string' && Object.keys(envelope).length <= 4
      ? `${envelope[ENCODED_MARK]}\u0000${envelope.key ?? ''}\u0000${data}`
      : JSON.stringify(envelope);
  }

  remember(envelope: PayloadEnvelope, value: Json): void {
    const text = JSON.stringify(value);
    if (text.length > RECENT_MAX_ITEM_BYTES) return;
    const id = RecentEncodes.id(envelope);
    this.texts.set(id, text);
    this.bytes += text.length + id.length;
    for (const [oldest, old] of this.texts) {
      if (this.bytes <= RECENT_MAX_BYTES) break;
      this.texts.delete(oldest);
      this.bytes -= old.length + oldest.length;
    }
  }

  recall(envelope: PayloadEnvelope): Json | undefined {
    const text = this.texts.get(RecentEncodes.id(envelope));
    return text === undefined ? undefined : (JSON.parse(text) as Json);
  }
}

/** A store seen through a payload codec: what `createEngine({ codec })` runs on. */
export interface CodecStore extends WorkflowStore {
  /** The store underneath, which holds the encoded payloads. */
  readonly inner: WorkflowStore;
  readonly codec: PayloadCodec;
}

/**
 * Wraps `store` so that every payload written through it is encoded by `codec` and every payload
 * read through it is decoded: workflow inputs and outputs, step and attempt outputs, event payloads,
 * state values, the `data` of every recorded error (and of its causes, and of a retry's previous
 * error), schedule inputs. The store only ever holds envelopes (`PayloadEnvelope`). Everything else
 * — ids, names, keys, statuses, times, error messages — passes unchanged, as do versions, slots,
 * signals, doctor and close.
 *
 * A stored value that is not an envelope (written before the codec was configured) is read as it
 * is; a codec without `encode` writes payloads as they are (decode-only). A codec that throws, or returns no envelope, fails the call with `CODEC_ERROR` naming the
 * run, the payload and the key, before the store is called (encode: nothing is written) or after it
 * answered (decode). `capabilities.maxPayloadBytes` is what the codec says fits in the store's limit.
 *
 * `createEngine({ store, codec })` applies it; apply it yourself to read encoded payloads with the
 * store API (`checkWorkflowCode({ store: codecStore(store, codec) })`, a script).
 */
export function codecStore(store: WorkflowStore, codec: PayloadCodec): CodecStore {
  if (typeof codec?.decode !== 'function' || (codec.encode !== undefined && typeof codec.encode !== 'function')) {
    throw new CairnError('INVALID_INPUT', 'codec must have a decode(envelope, context) method, and encode(value, context) unless it only decodes');
  }
  const encoder = codec.encode?.bind(codec);
  const recent = new RecentEncodes();

  async function encode(value: Json, context: PayloadContext): Promise<Json> {
    if (encoder === undefined) return value;
    let envelope: unknown;
    try {
      envelope = await encoder(value, context);
    } catch (error) {
      if (CairnError.is(error, 'CODEC_ERROR')) throw error;
      throw codecError('encode', context, error instanceof Error ? error.message : String(error), { cause: error });
    }
    if (!isPayloadEnvelope(envelope)) throw codecError('encode', context, 'the codec returned no envelope (an object with a "cairn:codec" string)');
    recent.remember(envelope, value);
    return envelope as unknown as Json;
  }

  async function decode(value: Json, context: PayloadContext): Promise<Json> {
    if (!isPayloadEnvelope(value)) return value;
    // The store hands back what this wrapper just wrote (a step insert, a run transition): the
    // value it encoded, without decoding it again.
    const known = recent.recall(value);
    if (known !== undefined) return known;
    try {
      return await codec.decode(value, context);
    } catch (error) {
      if (CairnError.is(error, 'CODEC_ERROR')) throw error;
      throw codecError('decode', context, error instanceof Error ? error.message : String(error), {
        codec: value['cairn:codec'],
        ...(typeof value.key === 'string' ? { key: value.key } : {}),
        cause: error,
      });
    }
  }

  const maybe = async (value: Json | undefined, context: PayloadContext, how: typeof encode): Promise<Json | undefined> =>
    value === undefined ? undefined : how(value, context);

  async function codeError(error: ErrorRecord, context: PayloadContext, how: typeof encode): Promise<ErrorRecord> {
    const [data, cause] = await Promise.all([maybe(error.data, context, how), error.cause === undefined ? undefined : codeError(error.cause, context, how)]);
    const out: ErrorRecord = { ...error };
    if (data !== undefined) out.data = data;
    if (cause !== undefined) out.cause = cause;
    return out;
  }
  const maybeError = async (error: ErrorRecord | undefined, context: PayloadContext, how: typeof encode) =>
    error === undefined ? undefined : codeError(error, context, how);

  /** A copy of `record` with `output` and `error` (when present) coded; the rest as it is. */
  async function codeOutcome<T extends { output?: Json; error?: ErrorRecord }>(record: T, output: PayloadContext, how: typeof encode): Promise<T> {
    if (record.output === undefined && record.error?.data === undefined && record.error?.cause === undefined) return record;
    const errorContext: PayloadContext = { ...output, kind: 'error data' };
    const [value, error] = await Promise.all([maybe(record.output, output, how), maybeError(record.error, errorContext, how)]);
    const out = { ...record };
    if (value !== undefined) out.output = value;
    if (error !== undefined) out.error = error;
    return out;
  }

  async function decodeRun(run: RunRecord): Promise<RunRecord>;
  async function decodeRun(run: RunRecord | undefined): Promise<RunRecord | undefined>;
  async function decodeRun(run: RunRecord | undefined): Promise<RunRecord | undefined> {
    if (run === undefined) return undefined;
    const runId = run.id;
    const [input, decoded, retries] = await Promise.all([
      decode(run.input, { kind: 'input', runId }),
      codeOutcome(run, { kind: 'output', runId }, decode),
      run.retries === undefined ? undefined : Promise.all(run.retries.map((r) => codeRetry(r, runId, decode))),
    ]);
    const out: RunRecord = { ...decoded, input };
    if (retries !== undefined) out.retries = retries;
    return out;
  }

  async function codeRetry(retry: RetryRecord, runId: string, how: typeof encode): Promise<RetryRecord> {
    if (retry.previousError === undefined) return retry;
    return { ...retry, previousError: await codeError(retry.previousError, { kind: 'error data', runId }, how) };
  }

  const stepContext = (runId: string, key: string): PayloadContext => ({ kind: 'step output', runId, name: key });
  const decodeStep = (step: StepRecord): Promise<StepRecord> => codeOutcome(step, stepContext(step.runId, step.key), decode);
  const decodeAttempt = (attempt: AttemptRecord): Promise<AttemptRecord> => codeOutcome(attempt, stepContext(attempt.runId, attempt.stepKey), decode);

  /**
   * `encode` that encodes each object once: a step's output and its attempt's are usually the same
   * value, recorded twice in one write; they get one envelope.
   */
  function encodeOnce(): typeof encode {
    const done = new Map<Json, Promise<Json>>();
    return (value, context) => {
      if (typeof value !== 'object' || value === null) return encode(value, context);
      let coded = done.get(value);
      if (coded === undefined) done.set(value, (coded = encode(value, context)));
      return coded;
    };
  }

  async function encodeNewStep(runId: string, step: NewStep): Promise<NewStep> {
    const context = stepContext(runId, step.key);
    const once = encodeOnce();
    const [coded, finished] = await Promise.all([
      codeOutcome(step, context, once),
      step.finishedAttempt === undefined ? undefined : codeOutcome(step.finishedAttempt, context, once),
    ]);
    return finished === undefined ? coded : { ...coded, finishedAttempt: finished };
  }

  async function encodeStepTransition(runId: string, t: StepTransition): Promise<StepTransition> {
    const context = stepContext(runId, t.key);
    const once = encodeOnce();
    const [to, endAttempt] = await Promise.all([
      codeOutcome(t.to, context, once),
      t.endAttempt === undefined ? undefined : codeOutcome(t.endAttempt, context, once),
    ]);
    const out: StepTransition = { ...t, to };
    if (endAttempt !== undefined) out.endAttempt = endAttempt;
    return out;
  }

  const scheduleContext = (schedule: ScheduleRecord): PayloadContext => ({ kind: 'schedule input', name: schedule.name });
  const encodeSchedule = async (schedule: ScheduleRecord): Promise<ScheduleRecord> => ({
    ...schedule,
    input: await encode(schedule.input, scheduleContext(schedule)),
  });
  async function decodeSchedule(schedule: ScheduleRecord): Promise<ScheduleRecord>;
  async function decodeSchedule(schedule: ScheduleRecord | undefined): Promise<ScheduleRecord | undefined>;
  async function decodeSchedule(schedule: ScheduleRecord | undefined): Promise<ScheduleRecord | undefined> {
    if (schedule === undefined || !isPayloadEnvelope(schedule.input)) return schedule;
    return { ...schedule, input: await decode(schedule.input, scheduleContext(schedule)) };
  }

  async function decodeEvent(event: EventRecord | undefined): Promise<EventRecord | undefined> {
    if (event === undefined || !isPayloadEnvelope(event.payload)) return event;
    return { ...event, payload: await decode(event.payload, { kind: 'event payload', runId: event.runId, name: event.name }) };
  }

  const { runs, steps, state, events, schedules, history } = store;
  const inner = store;
  const storeBytes = store.capabilities.maxPayloadBytes;
  const wrapped: CodecStore = {
    inner,
    codec,
    name: store.name,
    capabilities: {
      ...store.capabilities,
      maxPayloadBytes: encoder === undefined ? storeBytes : Math.min(storeBytes, codec.maxPayloadBytes?.(storeBytes) ?? storeBytes),
    },
    runs: {
      async create(run: NewRun, now) {
        const result = await runs.create({ ...run, input: await encode(run.input, { kind: 'input', runId: run.id }) }, now);
        return { run: await decodeRun(result.run), created: result.created };
      },
      get: async (runId) => decodeRun(await runs.get(runId)),
      list: (query) => runs.list(query),
      findByIdempotencyKey: async (workflow, key) => decodeRun(await runs.findByIdempotencyKey(workflow, key)),
      async reopen(runId, reopen, now) {
        return decodeRun(await runs.reopen(runId, { ...reopen, retry: await codeRetry(reopen.retry, runId, encode) }, now));
      },
      listEnded: (query) => runs.listEnded(query),
      claim: async (runId, owner, leaseMs, now) => decodeRun(await runs.claim(runId, owner, leaseMs, now)),
      renew: async (runId, fence, leaseMs, now) => decodeRun(await runs.renew(runId, fence, leaseMs, now)),
      async transition(runId, fence, t: RunTransition, now) {
        const coded = await codeOutcome(t, { kind: 'output', runId }, encode);
        return decodeRun(await runs.transition(runId, fence, coded, now));
      },
      wake: (runId, now) => runs.wake(runId, now),
      ...(runs.promiseWake === undefined ? {} : { promiseWake: runs.promiseWake.bind(runs) }),
      ...(runs.keepPromise === undefined ? {} : { keepPromise: runs.keepPromise.bind(runs) }),
      requestCancel: async (runId, now, reason) =>
        decodeRun(await (reason === undefined ? runs.requestCancel(runId, now) : runs.requestCancel(runId, now, reason))),
      findDue: (now, limit) => runs.findDue(now, limit),
      delete: (runId, condition) => (condition === undefined ? runs.delete(runId) : runs.delete(runId, condition)),
    },
    steps: {
      load: async (runId) => Promise.all((await steps.load(runId)).map(decodeStep)),
      async insert(runId, fence, step, now) {
        const result = await steps.insert(runId, fence, await encodeNewStep(runId, step), now);
        return { step: await decodeStep(result.step), created: result.created };
      },
      transition: async (runId, fence, t, now) => decodeStep(await steps.transition(runId, fence, await encodeStepTransition(runId, t), now)),
    },
    state: {
      set: async (runId, fence, key, value, now) => state.set(runId, fence, key, await encode(value, { kind: 'state', runId, name: key }), now),
      async get(runId) {
        const entries = Object.entries(await state.get(runId));
        const values = await Promise.all(entries.map(([key, value]) => decode(value, { kind: 'state', runId, name: key })));
        // fromEntries defines own properties: a key named `__proto__` stays a key.
        return Object.fromEntries(entries.map(([key], i) => [key, values[i] as Json]));
      },
    },
    events: {
      deliver: async (runId, name, payload, now, options) =>
        events.deliver(runId, name, await encode(payload, { kind: 'event payload', runId, name }), now, ...(options === undefined ? [] : [options])),
      get: async (runId, name, seq) => decodeEvent(await events.get(runId, name, seq)),
    },
    versions: store.versions,
    history: {
      list: async (runId) => Promise.all((await history.list(runId)).map(decodeAttempt)),
    },
    schedules: {
      async create(schedule) {
        const result = await schedules.create(await encodeSchedule(schedule));
        return { schedule: await decodeSchedule(result.schedule), created: result.created };
      },
      get: async (name) => decodeSchedule(await schedules.get(name)),
      list: async (options) => Promise.all((await schedules.list(options)).map((s) => decodeSchedule(s))),
      update: async (schedule, expectedRevision) => decodeSchedule(await schedules.update(await encodeSchedule(schedule), expectedRevision)),
      delete: (name) => schedules.delete(name),
      findDue: async (now, limit) => Promise.all((await schedules.findDue(now, limit)).map((s) => decodeSchedule(s))),
    },
    close: () => store.close(),
  };
  // Optional members: present exactly when the store has them (the engine looks for them).
  const optional = wrapped as { -readonly [K in 'slots' | 'signals' | 'doctor' | 'streams' | 'pauses' | 'bulk']?: WorkflowStore[K] };
  const streams = store.streams;
  if (streams !== undefined) {
    optional.streams = {
      append: async (runId, fence, entry, now) =>
        streams.append(
          runId,
          fence,
          entry.close === true ? entry : { ...entry, data: await encode(entry.data, { kind: 'stream chunk', runId, name: entry.stream }) },
          now,
        ),
      read: async (runId, stream, from, limit) =>
        Promise.all(
          (await streams.read(runId, stream, from, limit)).map(async (e) =>
            e.data === undefined || !isPayloadEnvelope(e.data) ? e : { ...e, data: await decode(e.data, { kind: 'stream chunk', runId, name: stream }) },
          ),
        ),
      list: (runId) => streams.list(runId),
    };
  }
  if (store.slots !== undefined) optional.slots = store.slots;
  const pauses = store.pauses;
  if (pauses !== undefined) {
    // A pause returns the run: its payloads are decoded like every other read of it.
    const decoded = async (change: Promise<PauseChange>): Promise<PauseChange> => {
      const { run, changed } = await change;
      return { run: await decodeRun(run), changed };
    };
    optional.pauses = {
      pauseRun: (runId, pause, now) => decoded(pauses.pauseRun(runId, pause, now)),
      resumeRun: (runId, now, scope) => decoded(scope === undefined ? pauses.resumeRun(runId, now) : pauses.resumeRun(runId, now, scope)),
      pauseWorkflow: (workflow, now, reason) => (reason === undefined ? pauses.pauseWorkflow(workflow, now) : pauses.pauseWorkflow(workflow, now, reason)),
      resumeWorkflow: (workflow) => pauses.resumeWorkflow(workflow),
      getWorkflowPause: (workflow) => pauses.getWorkflowPause(workflow),
      listWorkflowPauses: () => pauses.listWorkflowPauses(),
    };
  }
  // A bulk record holds no payload: a filter, counts and run ids.
  if (store.bulk !== undefined) optional.bulk = store.bulk;
  if (store.signals !== undefined) optional.signals = store.signals;
  if (store.doctor !== undefined) optional.doctor = store.doctor.bind(store);
  return wrapped;
}
