// `engine.request`: sends a request to a run and waits for the workflow's reply (docs/semantics.md
// "Requests", decision 70). The request is a message (see request-records.ts); the wait reads the
// request's stream, woken by the store's signals (a stream write, the run's end) where it has them
// and by polling otherwise. At the timeout it withdraws the request with the same positional write
// the workflow's receipt makes, so exactly one of the two lands: a timed-out request was never, and
// will never be, seen by the workflow — or it was received, and the caller is told so.
import { CairnError } from '../../errors/cairn-error.js';
import { fromErrorRecord } from '../../errors/error-record-codec.js';
import type { Json } from '../../model/json.js';
import { isTerminalRunStatus } from '../../model/run.js';
import type { StreamStore } from '../../store/workflow-store.js';
import { applyMessageSchema } from './apply-message-schema.js';
import { IDENTIFIER_LIMITS, checkIdentifier, checkOptions, checkRunId } from '../check-input.js';
import { type Duration, toMilliseconds } from '../define/duration.js';
import type { EngineRuntime } from '../engine-runtime.js';
import { checkRequestName, isRequestDefinition, requestNameOf } from '../define/request-definition.js';
import {
  RECEIVED,
  WITHDRAWN,
  receiptOf,
  replyOf,
  requestEventName,
  requestMessage,
  requestMessageKey,
  requestStreamName,
  requestStreams,
} from './request-records.js';
import type { ResultSignals } from '../wakeups/result-signals.js';
import { uuidv4 } from '../uuid.js';
import { Wakeup } from '../wakeups/wakeup.js';

/** Options of `engine.request`. */
export interface RequestOptions {
  /**
   * How long to wait for the reply (default `REQUEST_WAIT.defaultTimeoutMs`, 60 s). When it passes
   * before any execution took the request, the request is withdrawn (no workflow code will ever see
   * it) and the call throws `REQUEST_TIMEOUT` with `data.received: false`; when the workflow took it
   * but has not replied yet, `REQUEST_TIMEOUT` with `data.received: true` (the reply may still come:
   * ask again with the same `idempotencyKey` to get it).
   */
  timeout?: Duration;
  /**
   * Makes the request idempotent per run and request name: a later request to the same run and
   * name with the same key sends nothing and waits for (or returns at once) the first one's reply,
   * also after the run ended; a first request that timed out before it was received stays timed
   * out. An identifier of at most `IDENTIFIER_LIMITS.idempotencyKey` characters.
   */
  idempotencyKey?: string;
}

/** How long `engine.request` waits, and how often it looks at the store while it waits. */
export const REQUEST_WAIT = {
  /** The default `timeout`: 60 s. */
  defaultTimeoutMs: 60_000,
  /** The store is read this often on a store without signals (the reply's latency beyond the run's own time). */
  pollMsWithoutSignals: 100,
  /** With signals, a read this often is the safety net of a lost signal. */
  pollMsWithSignals: 1_000,
} as const;

/** What `sendRequest` needs from its engine. */
export interface RequestParts {
  rt: EngineRuntime;
  checkPayload: (value: unknown, what: string) => Json;
  resultSignals: ResultSignals;
  /** Hints of stream writes (the topic `STREAM_TOPIC`): a reply's write wakes its caller. */
  streamSignals: ResultSignals;
}

/**
 * `engine.request`: checks every argument before the store is touched (run id, request name,
 * options, then the payload: the definition's schema, then the JSON and size rules), sends the
 * request (stored and the run woken in one write; an unknown run is `RUN_NOT_FOUND`, an ended one
 * `REQUEST_RUN_ENDED`, nothing written), dispatches the run, and waits for the reply.
 */
export async function sendRequest(parts: RequestParts, rawRunId: unknown, rawRequest: unknown, payload: unknown, rawOptions: unknown): Promise<unknown> {
  const { rt } = parts;
  const runId = checkRunId('request runId', rawRunId);
  const name = checkRequestName('request name', requestNameOf(rawRequest));
  const options = checkOptions('request options', rawOptions, ['timeout', 'idempotencyKey']) as RequestOptions;
  const timeoutMs = options.timeout === undefined ? REQUEST_WAIT.defaultTimeoutMs : toMilliseconds(options.timeout, 'request timeout');
  const key =
    options.idempotencyKey === undefined ? undefined : checkIdentifier('request idempotencyKey', options.idempotencyKey, IDENTIFIER_LIMITS.idempotencyKey);
  const streams = requestStreams(rt.store, 'request');
  const schema = isRequestDefinition(rawRequest) ? rawRequest.schema : undefined;
  const value = await applyMessageSchema(schema, payload, `request ${JSON.stringify(name)}`, { argument: 'payload', request: name });
  const what = `payload of request ${JSON.stringify(name)}`;
  const json = parts.checkPayload(value === undefined ? null : value, what);
  const id = uuidv4();
  // The message wraps the payload with the id: it must fit the store too.
  const message = parts.checkPayload({ id, payload: json }, what);
  const now = rt.clock.now();
  const eventName = requestEventName(name);
  const delivery =
    key === undefined
      ? await rt.store.events.deliver(runId, eventName, message, now)
      : await rt.store.events.deliver(runId, eventName, message, now, { idempotencyKey: requestMessageKey(name, key) });
  let requestId = id;
  if (delivery.delivered) {
    const run = await rt.store.runs.get(runId);
    if (run) await rt.dispatchRun(run);
  } else if (delivery.duplicate) {
    // The same request sent before: wait for (or return) its reply.
    requestId = requestMessage((await rt.store.events.get(runId, eventName, delivery.seq))?.payload).id;
  } else {
    throw runEnded(runId, name, false, 'has ended');
  }
  return awaitReply(parts, streams, runId, name, requestId, now + timeoutMs);
}

function runEnded(runId: string, name: string, received: boolean, how: string): CairnError {
  return new CairnError('REQUEST_RUN_ENDED', `Run ${runId} ${how} without replying to request ${JSON.stringify(name)}`, {
    data: { runId, request: name, received },
  });
}

function timedOut(runId: string, name: string, received: boolean): CairnError {
  const how = received ? 'took the request but did not reply before the timeout' : 'did not take the request before the timeout: it was withdrawn';
  return new CairnError('REQUEST_TIMEOUT', `Run ${runId} ${how} (request ${JSON.stringify(name)})`, { data: { runId, request: name, received } });
}

/** Waits for request `id`'s reply until `deadline`, the run's end, or the request's withdrawal. */
async function awaitReply(parts: RequestParts, streams: StreamStore, runId: string, name: string, id: string, deadline: number): Promise<unknown> {
  const { rt } = parts;
  const stream = requestStreamName(id);
  const wakeup = new Wakeup();
  // Watching starts before the first read: a reply written in between is hinted, not missed.
  const writes = await parts.streamSignals.watch(runId, () => wakeup.signal());
  const end = await parts.resultSignals.watch(runId, () => wakeup.signal());
  try {
    let ended = false;
    for (;;) {
      const entries = await streams.read(runId, stream, 0, 2);
      const reply = replyOf(entries);
      if (reply !== undefined) {
        if (reply.ok) return reply.value;
        const cause = fromErrorRecord(reply.error);
        throw new CairnError('REQUEST_REJECTED', `Run ${runId} rejected request ${JSON.stringify(name)}: ${cause.message}`, {
          cause,
          data: { runId, request: name },
        });
      }
      const receipt = receiptOf(entries);
      if (receipt === WITHDRAWN) throw timedOut(runId, name, false);
      // The run writes nothing after its end: this read, made after seeing it ended, was the last word.
      if (ended) throw runEnded(runId, name, receipt === RECEIVED, 'ended');
      const now = rt.clock.now();
      if (now >= deadline) {
        if (receipt === RECEIVED) throw timedOut(runId, name, true);
        // Withdraw: of this write and the workflow's receipt, the first wins.
        const withdrawn = await streams.append(runId, null, { stream, index: 0, data: WITHDRAWN }, now).catch((error: unknown) => {
          if (CairnError.is(error, 'RUN_CONFLICT') || CairnError.is(error, 'RUN_NOT_FOUND')) return undefined;
          throw error;
        });
        if (withdrawn?.created === true) throw timedOut(runId, name, false);
        // Taken first (or the run ended, or another caller with the key withdrew it): look again.
        ended = withdrawn === undefined;
        const again = await streams.read(runId, stream, 0, 2);
        if (replyOf(again) !== undefined) continue;
        if (receiptOf(again) === WITHDRAWN) throw timedOut(runId, name, false);
        if (ended) throw runEnded(runId, name, receiptOf(again) === RECEIVED, 'ended');
        throw timedOut(runId, name, true);
      }
      const run = await rt.store.runs.get(runId);
      if (run === undefined)
        throw new CairnError('RUN_NOT_FOUND', `Run ${runId} was deleted while request ${JSON.stringify(name)} waited`, { data: { runId } });
      ended = isTerminalRunStatus(run.status);
      // While the listeners are healthy a write is hinted, and a read every second covers a lost
      // hint; otherwise (no signals, or a listener down) the store is read every 100 ms.
      const pollMs = writes.healthy() && end.healthy() ? REQUEST_WAIT.pollMsWithSignals : REQUEST_WAIT.pollMsWithoutSignals;
      if (!ended) await wakeup.wait(rt.clock, Math.min(pollMs, deadline - now), undefined);
    }
  } finally {
    writes.end();
    end.end();
  }
}
