// The primitives that wait or read rather than run code: `ctx.sleep` and `ctx.sleepUntil`,
// `ctx.waitForEvent` (the k-th wait of a name takes the k-th message, decision 23), `ctx.select`,
// `ctx.setState` and `ctx.state` (not replayed, decision 8), and the recorded values `ctx.now`,
// `ctx.random`, `ctx.uuid`. Separate from steps and children: each is a short recipe over the
// records layer, and reads best side by side.
import { CairnError } from '../../errors/cairn-error.js';
import { fromErrorRecord, toErrorRecord } from '../../errors/error-record-codec.js';
import type { Json } from '../../model/json.js';
import type { NewStep, StepRecord } from '../../model/step.js';
import { IDENTIFIER_LIMITS, checkIdentifier } from '../check-input.js';
import { toMilliseconds } from '../define/duration.js';
import { checkEventName, eventNameOf } from '../define/event-definition.js';
import { type CheckedAlternative, checkAlternatives } from '../define/select-alternatives.js';
import type { WaitForEventOptions } from '../define/workflow-context.js';
import { type Call, type Delivery, SUSPEND } from './call.js';
import type { ChildCalls } from './child-calls.js';
import { callerLocation, recordedCall } from './divergence.js';
import { type Site, cancelledError } from './outcome.js';
import type { Replay } from './replay.js';

/** Sleeps, event waits, select, state and recorded values. */
export class Waits {
  constructor(
    private readonly r: Replay,
    private readonly kids: ChildCalls,
  ) {}

  /** Per event name, the next message a wait or a select takes (see `reserveMessage`). */
  readonly messageCursor = new Map<string, number>();
  /** State written by this execution, which its later reads see whatever the snapshot says. */
  readonly stateOverlay = new Map<string, Json>();
  /** The run's state as first read by this execution (`ctx.state`). */
  stateSnapshot: Record<string, Json> | undefined;

  async sleepStep(call: Call, name: string, wakeAt: number): Promise<Delivery> {
    checkIdentifier('ctx.sleep name', name, IDENTIFIER_LIMITS.stepName);
    const site = this.r.begin('sleep', name);
    if (this.r.probeKey !== undefined) return this.r.replayOnly(call, site);
    return this.sleepFrom(call, site, wakeAt);
  }

  /** A sleep from its latest record (`site.recorded`) on: the first time, and again on a resume (see `Call.resume`). */
  private async sleepFrom(call: Call, site: Site, wakeAt: number): Promise<Delivery> {
    let step = site.recorded;
    if (step?.status === 'succeeded') return this.r.finished(call, site, step, async () => ({ ok: true, value: undefined }));
    const now = this.r.rt.clock.now();
    if (!step) {
      if (wakeAt <= now) {
        const turn = await this.r.claim(call);
        await this.r.insert(site, { status: 'succeeded', maxAttempts: 1, wakeAt, turn });
        return { turn, ok: true, value: undefined };
      }
      step = site.recorded = await this.r.insert(site, { status: 'waiting', maxAttempts: 1, wakeAt });
    }
    if ((step.wakeAt ?? 0) > now) {
      call.resume = () => this.sleepFrom(call, site, wakeAt);
      this.r.suspend(step.wakeAt, 'sleep');
    }
    const turn = await this.r.claim(call);
    await this.r.transition({ key: site.key, from: { status: ['waiting'], attempt: step.attempt }, to: { status: 'succeeded', turn } });
    return { turn, ok: true, value: undefined };
  }

  async eventStep(call: Call, event: unknown, options: WaitForEventOptions): Promise<Delivery> {
    // The same rule as engine.sendEvent, so no name can be sent that no wait accepts.
    const eventName = checkEventName('ctx.waitForEvent name', eventNameOf(event));
    const timeoutMs = options.timeout === undefined ? undefined : toMilliseconds(options.timeout, `timeout of event ${JSON.stringify(eventName)}`);
    return this.messageStep(call, eventName, timeoutMs);
  }

  /**
   * The wait for the next message of `eventName` (checked by the caller): `ctx.waitForEvent`, and
   * `ctx.receiveRequest` for the event a request travels as.
   */
  async messageStep(call: Call, eventName: string, timeoutMs: number | undefined): Promise<Delivery> {
    const site = this.r.begin('event', `event:${eventName}`);
    // The message this wait takes: the next one of its name that no earlier wait took or still
    // waits for. It depends on the order of calls and outcomes only (both replayed exactly), never
    // on timing. A wait that times out gives its message back (see `releaseMessage`).
    const seq = this.reserveMessage(eventName);
    const release = () => this.releaseMessage(eventName, seq);
    if (this.r.probeKey !== undefined) {
      const delivery = await this.r.replayOnly(call, site);
      return delivery.ok ? delivery : { ...delivery, onDeliver: release };
    }
    return this.eventFrom(call, site, eventName, seq, timeoutMs);
  }

  /** An event wait from its latest record (`site.recorded`) on: the first time, and again on a resume (see `Call.resume`). */
  private async eventFrom(call: Call, site: Site, eventName: string, seq: number, timeoutMs: number | undefined): Promise<Delivery> {
    const release = () => this.releaseMessage(eventName, seq);
    let step = site.recorded;
    if (step?.status === 'succeeded') {
      const output = step.output ?? null;
      return this.r.finished(call, site, step, async () => ({ ok: true, value: output }));
    }
    if (step?.status === 'failed') {
      const error = fromErrorRecord(step.error ?? { name: 'Error', message: 'event wait failed' });
      return { ...(await this.r.finished(call, site, step, async () => ({ ok: false, error }))), onDeliver: release };
    }
    const message = await this.r.rt.store.events.get(this.r.run.id, eventName, seq);
    const now = this.r.rt.clock.now();
    if (!step) {
      if (message) {
        const turn = await this.r.claim(call);
        this.r.fault('before-checkpoint', site.key);
        await this.r.insert(site, { status: 'succeeded', maxAttempts: 1, output: message.payload, turn });
        this.r.fault('after-checkpoint', site.key);
        return { turn, ok: true, value: message.payload };
      }
      const wait: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'> = { status: 'waiting', maxAttempts: 1 };
      if (timeoutMs !== undefined) wait.wakeAt = now + timeoutMs;
      step = site.recorded = await this.r.insert(site, wait);
    }
    const from = { status: ['waiting' as const], attempt: step.attempt };
    if (message) {
      const turn = await this.r.claim(call);
      this.r.fault('before-checkpoint', site.key);
      await this.r.transition({ key: site.key, from, to: { status: 'succeeded', output: message.payload, wakeAt: null, turn } });
      this.r.fault('after-checkpoint', site.key);
      return { turn, ok: true, value: message.payload };
    }
    if (step.wakeAt !== undefined && step.wakeAt <= now) {
      const error = new CairnError('EVENT_TIMEOUT', `No event ${JSON.stringify(eventName)} arrived before the timeout`, {
        data: { runId: this.r.run.id, event: eventName },
      });
      const turn = await this.r.claim(call);
      await this.r.transition({ key: site.key, from, to: { status: 'failed', error: toErrorRecord(error), turn } });
      return { turn, ok: false, error, onDeliver: release };
    }
    call.resume = () => this.eventFrom(call, site, eventName, seq, timeoutMs);
    this.r.suspend(step.wakeAt, 'event');
  }

  /** Reserves the next message of `name` for a wait (1, 2, ...). */
  reserveMessage(name: string): number {
    const seq = this.messageCursor.get(name) ?? 1;
    this.messageCursor.set(name, seq + 1);
    return seq;
  }

  /**
   * A wait for message `seq` of `name` timed out: the message goes to the next wait of that name,
   * when no later wait of it reserved one meanwhile (concurrent waits of one name keep their places).
   */
  releaseMessage(name: string, seq: number): void {
    if ((this.messageCursor.get(name) ?? 1) === seq + 1) this.messageCursor.set(name, seq);
  }

  /**
   * `ctx.select`: waits for the first of several events, timers and children, records which won
   * (and its value) as one step, and hands that back on every replay. Losing children are
   * cancelled; a losing event's message is not taken (the next wait of that name gets it).
   */
  async selectStep(call: Call, name: string, alternatives: unknown): Promise<Delivery> {
    checkIdentifier('ctx.select name', name, IDENTIFIER_LIMITS.stepName);
    const alts = checkAlternatives(name, alternatives, this.r.rt.clock.now());
    const site = this.r.begin('select', name);
    // The message each event alternative would take: the next one no wait of that name took yet.
    const messageOf = (event: string) => this.messageCursor.get(event) ?? 1;
    const taken = (output: Json | undefined) => () => {
      const won = output as { kind?: string; event?: string; seq?: number } | undefined;
      if (won?.kind !== 'event' || typeof won.event !== 'string' || typeof won.seq !== 'number') return;
      this.messageCursor.set(won.event, Math.max(this.messageCursor.get(won.event) ?? 1, won.seq + 1));
    };
    const recordedDelivery = async (step: StepRecord): Promise<Delivery> => {
      const { winner, kind, value } = step.output as { winner: string; kind: string; value: Json };
      return { ...(await this.r.finished(call, site, step, async () => ({ ok: true, value: { winner, kind, value } }))), onDeliver: taken(step.output) };
    };
    if (this.r.probeKey !== undefined) {
      if (site.recorded?.status === 'succeeded') return recordedDelivery(site.recorded);
      this.r.suspend(undefined, 'select');
    }
    let step = site.recorded;
    if (step?.status === 'succeeded') return recordedDelivery(step);
    const timers = alts.flatMap((alt) => (alt.kind === 'timer' ? [alt.wakeAt] : []));
    if (!step) {
      const wait: Omit<NewStep, 'key' | 'name' | 'kind' | 'seq'> = { status: 'waiting', maxAttempts: 1 };
      if (timers.length > 0) wait.wakeAt = Math.min(...timers);
      step = await this.r.insert(site, wait);
    }
    // The timers count from the first execution's call: its earliest deadline is the step's wakeAt,
    // and the others keep their distance from it.
    const shift = step.wakeAt === undefined || timers.length === 0 ? 0 : step.wakeAt - Math.min(...timers);
    const children = new Map<string, string>();
    for (const alt of alts) {
      if (alt.kind !== 'child') continue;
      // One child per alternative, whatever crashes; each look finds the same one.
      const { run: child, created } = await this.kids.createRun(alt.workflow, alt.input, `$child:${this.r.run.id}:${site.key}/${alt.key}`, {
        parent: { runId: this.r.run.id, stepKey: site.key },
        deadline: 'inherit',
      });
      children.set(alt.key, child.id);
      this.kids.children.add(child.id);
      if (created) await this.r.rt.dispatchRun(child);
    }
    const now = this.r.rt.clock.now();
    let won: Json | undefined;
    for (const alt of alts) {
      won = await this.lookAt(alt, now, shift, children, messageOf);
      if (won !== undefined) break;
    }
    if (won === undefined) this.r.suspend(step.wakeAt, 'select');
    // Losing children are cancelled (and told at once when they run here).
    const winner = (won as { winner: string }).winner;
    for (const [key, childId] of children) {
      if (key === winner) continue;
      const child = await this.r.rt.store.runs.requestCancel(childId, this.r.rt.clock.now());
      if (child && child.status !== 'completed' && child.status !== 'failed' && child.status !== 'cancelled') {
        this.r.rt.executing.get(child.id)?.observeCancel(cancelledError(child.id, child.cancelReason));
        await this.r.rt.dispatchRun(child);
      }
    }
    const turn = await this.r.claim(call);
    await this.r.transition({
      key: site.key,
      from: { status: ['waiting'], attempt: step.attempt },
      to: { status: 'succeeded', output: won as Json, wakeAt: null, turn },
    });
    const { kind, value } = won as { kind: string; value: Json };
    return { turn, ok: true, value: { winner, kind, value }, onDeliver: taken(won) };
  }

  /** Whether one select alternative is ready now; its recorded outcome if so. */
  async lookAt(
    alt: CheckedAlternative,
    now: number,
    shift: number,
    children: Map<string, string>,
    messageOf: (event: string) => number,
  ): Promise<Json | undefined> {
    if (alt.kind === 'timer') return alt.wakeAt + shift <= now ? { winner: alt.key, kind: 'timer', value: null } : undefined;
    if (alt.kind === 'event') {
      const seq = messageOf(alt.event);
      const message = await this.r.rt.store.events.get(this.r.run.id, alt.event, seq);
      return message ? { winner: alt.key, kind: 'event', value: message.payload, event: alt.event, seq } : undefined;
    }
    const child = await this.kids.lastOfChain(children.get(alt.key) as string);
    if (child?.status === 'completed') return { winner: alt.key, kind: 'child', value: { ok: true, output: child.output ?? null } };
    if (!child || child.status === 'failed' || child.status === 'cancelled') {
      return { winner: alt.key, kind: 'child', value: { ok: false, status: child?.status ?? 'deleted', error: (child?.error ?? null) as Json } };
    }
    return undefined;
  }

  async setState(call: Call, key: string, value: unknown): Promise<Delivery> {
    checkIdentifier('ctx.setState key', key, IDENTIFIER_LIMITS.stateKey, { allowEmpty: true });
    const json = this.r.payload(value, `state ${JSON.stringify(key)}`);
    const turn = this.r.claimNext(call);
    // A probe writes nothing, but later reads in its replay must see this value, as the
    // execution that scheduled the queued step did.
    if (this.r.probeKey === undefined) await this.r.write((fence, now) => this.r.rt.store.state.set(this.r.run.id, fence, key, json, now));
    this.stateOverlay.set(key, json);
    return { turn, ok: true, value: undefined };
  }

  async readState(call: Call, key: string): Promise<Delivery> {
    checkIdentifier('ctx.state key', key, IDENTIFIER_LIMITS.stateKey, { allowEmpty: true });
    const turn = this.r.claimNext(call);
    if (this.stateOverlay.has(key)) return { turn, ok: true, value: this.stateOverlay.get(key) };
    this.stateSnapshot ??= await this.r.rt.store.state.get(this.r.run.id);
    // A write of this key may have been made while the snapshot was read.
    return { turn, ok: true, value: this.stateOverlay.has(key) ? this.stateOverlay.get(key) : this.stateSnapshot[key] };
  }

  /** Per patch id, this execution's first answer (`ctx.patched`), which holds for the rest of it. */
  readonly patches = new Map<string, boolean>();

  /** `ctx.patched`: see `WorkflowContext.patched`. */
  patched(id: string): boolean {
    checkIdentifier('ctx.patched id', id, IDENTIFIER_LIMITS.stepName);
    if (this.r.fatal) throw this.r.fatal;
    const known = this.patches.get(id);
    if (known !== undefined) return known;
    const key = `patch:${id}`;
    const seq = this.r.callIndex;
    const atSeq = this.r.recordedBySeq.get(seq);
    const recorded = this.r.recorded.get(key);
    if (recorded !== undefined && recorded.seq !== seq) {
      // The marker is in the history, at another place: the calls before it changed.
      throw this.r.diverge({
        reason: 'different-call',
        seq,
        recorded: recordedCall(atSeq),
        called: { kind: 'patch', key, name: id },
        location: callerLocation(),
      });
    }
    let answer: boolean;
    if (atSeq?.key === key && atSeq.kind === 'patch') answer = true;
    else if (seq > this.r.maxRecordedSeq) {
      // Past everything recorded: this execution takes the new path, and says so in the history.
      answer = true;
      if (this.r.probeKey === undefined) this.recordMarker({ kind: 'patch', name: id, key, seq, recorded: undefined });
    } else answer = false;
    if (answer) {
      this.r.callIndex += 1;
      this.r.calledKeys.add(key);
    }
    this.patches.set(id, answer);
    return answer;
  }

  /** `ctx.deprecatePatch`: passes over the marker of `id` where the history holds it; records nothing. */
  deprecatePatch(id: string): void {
    checkIdentifier('ctx.deprecatePatch id', id, IDENTIFIER_LIMITS.stepName);
    if (this.r.fatal) throw this.r.fatal;
    if (this.patches.has(id)) return;
    const key = `patch:${id}`;
    const atSeq = this.r.recordedBySeq.get(this.r.callIndex);
    if (atSeq?.key === key && atSeq.kind === 'patch') {
      this.r.callIndex += 1;
      this.r.calledKeys.add(key);
    }
    this.patches.set(id, true);
  }

  /**
   * Writes a patch marker (a succeeded `patch` step, no turn: it is never delivered) while the
   * code goes on; later writes wait for it (`markerWrite`). A failed write ends the execution as
   * any failed write does (the run resumes elsewhere and answers again from its history).
   */
  private recordMarker(site: Site): void {
    const previous = this.r.markerWrite;
    this.r.markersUnwritten += 1;
    this.r.markerWrite = (async () => {
      if (previous !== undefined) await previous;
      if (this.r.closed) return;
      this.r.fault('before-checkpoint', site.key);
      const step: NewStep = { key: site.key, name: site.name, kind: 'patch', seq: site.seq, status: 'succeeded', maxAttempts: 1 };
      const { created } = await this.r.rt.store.steps.insert(this.r.run.id, this.r.run.fence, step, this.r.rt.clock.now());
      if (created) this.r.lastInsertFence = this.r.run.fence;
      this.r.markersUnwritten -= 1;
      this.r.fault('after-checkpoint', site.key);
    })().catch((error: unknown) => {
      if (error !== SUSPEND) this.r.crash(error);
    });
  }

  async recordedValue(call: Call, kind: 'now' | 'random' | 'uuid', make: () => Json): Promise<Delivery> {
    const site = this.r.begin(kind, `$${kind}`);
    const recorded = site.recorded;
    if (recorded) return this.r.finished(call, site, recorded, async () => ({ ok: true, value: recorded.output }));
    if (this.r.probeKey !== undefined) this.r.suspend(undefined, 'recheck');
    const output = make();
    const turn = await this.r.claim(call);
    await this.r.insert(site, { status: 'succeeded', maxAttempts: 1, output, turn });
    return { turn, ok: true, value: output };
  }
}
