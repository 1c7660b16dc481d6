// `ctx.receiveRequest` and the `reply`/`reject` of what it returns (docs/semantics.md "Requests",
// decision 70). Built on two recorded primitives: the wait for the next message of the event the
// request travels as (an `event` step, replayed like every wait), then the receipt, entry 0 of the
// request's stream, written once: a request its caller withdrew first (`withdrawn` there) is passed
// over, and the next message waited for. Entry 0 never changes once written, so every execution
// makes the same choice. The reply is entry 1, written once: a replay that replies again writes
// nothing, and the caller gets the first reply.
import { CairnError } from '../../errors/cairn-error.js';
import { toErrorRecord } from '../../errors/error-record-codec.js';
import type { Json } from '../../model/json.js';
import { toJsonRoundTrip } from '../../serialization/json-value.js';
import type { StreamStore } from '../../store/workflow-store.js';
import { checkRequestName, requestNameOf } from '../define/request-definition.js';
import {
  RECEIVED,
  type RequestMessage,
  type RequestReply,
  receiptOf,
  requestEventName,
  requestMessage,
  requestStreamName,
  requestStreams,
} from '../messages/request-records.js';
import { STREAM_LIMITS } from '../messages/stream-limits.js';
import { signalStreamWrite } from '../messages/stream-signal.js';
import type { ReceivedRequest } from '../define/workflow-context.js';
import type { Call, Delivery } from './call.js';
import type { Replay } from './replay.js';
import type { Waits } from './waits.js';

// The bytes `{"ok":true,"value":}` adds around a reply in its stream entry, with room to spare.
const REPLY_ENVELOPE_BYTES = 64;

/** One request this execution took: where its crash sites are named (`request:<name>#<k>`). */
interface Taken {
  name: string;
  k: number;
  message: RequestMessage;
}

/** The requests this execution waited for, took and answered. */
export class RequestCalls {
  /** Per request name, how many messages this execution's code has waited for (in call order). */
  private readonly waited = new Map<string, number>();
  /** Requests this execution replied to or rejected: a second answer is refused. */
  private readonly answered = new Set<string>();

  constructor(
    private readonly r: Replay,
    private readonly waits: Waits,
  ) {}

  /** `ctx.receiveRequest`: the next request of `name` that its caller did not withdraw. */
  async receive(request: unknown): Promise<ReceivedRequest> {
    const name = checkRequestName('ctx.receiveRequest name', requestNameOf(request));
    const streams = requestStreams(this.r.rt.store, 'ctx.receiveRequest');
    const eventName = requestEventName(name);
    for (;;) {
      const k = (this.waited.get(name) ?? 0) + 1;
      this.waited.set(name, k);
      const payload = await this.r.guard<Json>((call) => this.waits.messageStep(call, eventName, undefined));
      const taken: Taken = { name, k, message: requestMessage(payload) };
      if (await this.r.guard<boolean>((call) => this.take(call, streams, taken))) return this.handle(streams, taken);
    }
  }

  /** Writes the receipt (entry 0) unless the caller withdrew first; resolves with whether the request is this run's to answer. */
  private async take(call: Call, streams: StreamStore, taken: Taken): Promise<Delivery> {
    const turn = this.r.claimNext(call);
    const stream = requestStreamName(taken.message.id);
    const read = async () => receiptOf(await streams.read(this.r.run.id, stream, 0, 1));
    if (this.r.probeKey !== undefined) {
      // A probe writes nothing: it goes on only where an execution already decided.
      const receipt = await read();
      if (receipt === undefined) this.r.suspend(undefined, 'recheck');
      return { turn, ok: true, value: receipt === RECEIVED };
    }
    const site = `request:${taken.name}#${taken.k}`;
    this.r.fault('before-checkpoint', site);
    const { created } = await this.r.write((fence, now) => streams.append(this.r.run.id, fence, { stream, index: 0, data: RECEIVED }, now));
    this.r.fault('after-checkpoint', site);
    return { turn, ok: true, value: created || (await read()) === RECEIVED };
  }

  private handle(streams: StreamStore, taken: Taken): ReceivedRequest {
    const { name, message } = taken;
    const maxBytes = Math.min(STREAM_LIMITS.maxChunkBytes, this.r.rt.maxPayloadBytes) - REPLY_ENVELOPE_BYTES;
    return {
      id: message.id,
      name,
      payload: message.payload,
      reply: (value: unknown) =>
        this.r.guard((call) => {
          const json = toJsonRoundTrip(value === undefined ? null : value, { what: `reply to request ${JSON.stringify(name)}`, maxBytes }).value;
          return this.answer(call, streams, taken, { ok: true, value: json });
        }),
      reject: (error: unknown) => this.r.guard((call) => this.answer(call, streams, taken, { ok: false, error: toErrorRecord(error) })),
    };
  }

  /** Writes the reply (entry 1) once; a replay's write finds its place taken and writes nothing. */
  private async answer(call: Call, streams: StreamStore, taken: Taken, reply: RequestReply): Promise<Delivery> {
    const { id } = taken.message;
    if (this.answered.has(id)) {
      throw new CairnError('INVALID_INPUT', `request ${JSON.stringify(taken.name)} (${id}) was answered already: a request takes one reply or reject`, {
        data: { runId: this.r.run.id, request: taken.name, id },
      });
    }
    this.answered.add(id);
    const turn = this.r.claimNext(call);
    if (this.r.probeKey === undefined) {
      const site = `request:${taken.name}#${taken.k}:reply`;
      this.r.fault('before-checkpoint', site);
      const entry = { stream: requestStreamName(id), index: 1, data: reply as unknown as Json };
      const { created } = await this.r.write((fence, now) => streams.append(this.r.run.id, fence, entry, now));
      this.r.fault('after-checkpoint', site);
      if (created) signalStreamWrite(this.r.rt, this.r.run.id);
    }
    return { turn, ok: true, value: undefined };
  }
}
