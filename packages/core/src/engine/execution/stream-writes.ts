// `ctx.emit` and `ctx.closeStream`: writes to the run's named streams (docs/semantics.md, Streams;
// decision 59). Not recorded as steps: a stream entry is positional (the k-th emit of a stream is
// chunk k), so a replay that makes the call again finds its place taken and writes nothing. Like a
// state write, each call takes the turn after it, so what the code does next happens at the same
// point on every execution.
import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import type { NewStreamEntry } from '../../model/stream.js';
import { toJsonRoundTrip } from '../../serialization/json-value.js';
import type { StreamStore } from '../../store/workflow-store.js';
import { IDENTIFIER_LIMITS, checkIdentifier } from '../check-input.js';
import { STREAM_LIMITS } from '../messages/stream-limits.js';
import { signalStreamWrite } from '../messages/stream-signal.js';
import { MAX_QUERY_NAME, isReservedStream, queryStreamName } from '../messages/reserved-streams.js';
import { invalidInput } from '../check-input.js';
import type { Call, Delivery } from './call.js';
import type { Replay } from './replay.js';

/** The streams this execution wrote to: how many chunks each has in call order, and which it closed. */
export class StreamWrites {
  /** Per stream, the index of the next chunk this execution's code emits. */
  private readonly next = new Map<string, number>();
  private readonly closed = new Set<string>();
  /**
   * Per stream, the last write this execution started. The store takes a stream's entries only in
   * index order, and emits made at once (`Promise.all`) would reach a pooled store in any order, so
   * each write waits for the one before it on the same stream.
   */
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly r: Replay) {}

  /** `ctx.emit`: checks, takes the next place of the stream and writes the chunk there. */
  async emit(call: Call, stream: string, chunk: unknown): Promise<Delivery> {
    return this.emitTo(call, this.streams('ctx.emit', stream), stream, chunk);
  }

  /**
   * `ctx.expose`: the query's next value, as the next entry of its stream (`$query:<name>`), so a
   * replay writes nothing again and `engine.query` reads the latest entry.
   */
  async expose(call: Call, name: string, value: unknown): Promise<Delivery> {
    checkIdentifier('ctx.expose name', name, MAX_QUERY_NAME);
    return this.emitTo(call, this.store('ctx.expose'), queryStreamName(name), value);
  }

  private async emitTo(call: Call, streams: StreamStore, stream: string, chunk: unknown): Promise<Delivery> {
    const maxBytes = Math.min(STREAM_LIMITS.maxChunkBytes, this.r.rt.maxPayloadBytes);
    let data: Json;
    try {
      data = toJsonRoundTrip(chunk, { what: `chunk of stream ${JSON.stringify(stream)}`, maxBytes }).value;
    } catch (error) {
      if (!CairnError.is(error, 'PAYLOAD_TOO_LARGE')) throw error;
      throw new CairnError('STREAM_LIMIT', `Run ${this.r.run.id}: a chunk of stream ${JSON.stringify(stream)} is larger than ${maxBytes} bytes`, {
        cause: error,
        data: { runId: this.r.run.id, stream, maxBytes },
      });
    }
    const index = this.next.get(stream) ?? 0;
    if (this.closed.has(stream)) {
      throw new CairnError('STREAM_CONFLICT', `Run ${this.r.run.id}: stream ${JSON.stringify(stream)} is closed`, {
        data: { runId: this.r.run.id, stream, index },
      });
    }
    if (index >= STREAM_LIMITS.maxChunks) {
      throw new CairnError('STREAM_LIMIT', `Run ${this.r.run.id}: stream ${JSON.stringify(stream)} holds its ${STREAM_LIMITS.maxChunks} chunks`, {
        data: { runId: this.r.run.id, stream, maxChunks: STREAM_LIMITS.maxChunks },
      });
    }
    this.next.set(stream, index + 1);
    return this.write(call, streams, { stream, index, data });
  }

  /** `ctx.closeStream`: writes the end marker after the chunks this execution's code emitted. */
  async close(call: Call, stream: string): Promise<Delivery> {
    const streams = this.streams('ctx.closeStream', stream);
    if (this.closed.has(stream)) return { turn: this.r.claimNext(call), ok: true, value: undefined };
    this.closed.add(stream);
    return this.write(call, streams, { stream, index: this.next.get(stream) ?? 0, close: true });
  }

  private streams(what: string, stream: string): StreamStore {
    checkIdentifier(`${what} stream`, stream, IDENTIFIER_LIMITS.stepName);
    // Requests and queries keep their entries in streams of reserved names: no emit may pose as one.
    if (isReservedStream(stream))
      throw invalidInput(`${what} stream`, 'is reserved: names starting with "$request:" or "$query:" belong to the engine', stream);
    return this.store(what);
  }

  private store(what: string): StreamStore {
    const streams = this.r.rt.store.streams;
    if (streams === undefined) {
      throw new CairnError('STREAM_UNSUPPORTED', `${what}: the store ${this.r.rt.store.name} has no streams`, { data: { store: this.r.rt.store.name } });
    }
    return streams;
  }

  private async write(call: Call, streams: StreamStore, entry: NewStreamEntry): Promise<Delivery> {
    const turn = this.r.claimNext(call);
    // A probe (a queued step's worker, a saga probe, a check) writes nothing.
    if (this.r.probeKey === undefined) {
      const previous = this.tails.get(entry.stream);
      const written = previous === undefined ? this.append(streams, entry) : previous.then(() => this.append(streams, entry));
      // A failed write fails its own call; the next one then meets the store's refusal itself.
      const tail = written.catch(() => {});
      this.tails.set(entry.stream, tail);
      try {
        await written;
      } finally {
        if (this.tails.get(entry.stream) === tail) this.tails.delete(entry.stream);
      }
    }
    return { turn, ok: true, value: undefined };
  }

  private async append(streams: StreamStore, entry: NewStreamEntry): Promise<void> {
    // Crash points around the write (`stream:<name>#<index>`, `#end` for the marker).
    const site = `stream:${entry.stream}#${entry.close === true ? 'end' : entry.index}`;
    this.r.fault('before-checkpoint', site);
    const { created } = await this.r.write((fence, now) => streams.append(this.r.run.id, fence, entry, now));
    this.r.fault('after-checkpoint', site);
    if (created) signalStreamWrite(this.r.rt, this.r.run.id);
  }
}
