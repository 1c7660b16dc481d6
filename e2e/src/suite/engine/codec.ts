import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { CairnError, aesGcmCodec, defineSchedule, defineWorkflow, type Json } from '@cairn/core';
import { codecStore, isPayloadEnvelope } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { engineWorld } from './engine-world.js';

/** Marks put in every payload; none may be found in what the backend stores. */
const MARKS = {
  input: 'PLAIN-INPUT-7d1',
  step: 'PLAIN-STEP-7d1',
  state: 'PLAIN-STATE-7d1',
  event: 'PLAIN-EVENT-7d1',
  childInput: 'PLAIN-CHILD-INPUT-7d1',
  childOutput: 'PLAIN-CHILD-OUTPUT-7d1',
  errorData: 'PLAIN-ERROR-DATA-7d1',
  output: 'PLAIN-OUTPUT-7d1',
  schedule: 'PLAIN-SCHEDULE-7d1',
} as const;

/** Engine scenarios: a payload codec (`createEngine({ codec })`), the store seeing only its envelopes. */
export const codecGroup: CaseGroup = caseGroup('engine.codec', 'engine: payload codec', [
  conformanceCase(
    'an AES-256-GCM codec: the raw rows, documents and keys hold none of the plaintext (input, output, step output, state, event payload, child input and output, error data, schedule input); a rotated key still reads the old payloads; a missing key is CODEC_ERROR',
    async (env) => {
      const k1 = randomBytes(32);
      const k2 = randomBytes(32);
      const first = aesGcmCodec({ keys: { k1 }, current: 'k1' });
      const rotated = aesGcmCodec({ keys: { k1, k2 }, current: 'k2' });
      const kid = defineWorkflow('codec-kid', async (_ctx, input: Json) => ({ got: input, mark: MARKS.childOutput }));
      const wf = defineWorkflow('codec-payloads', async (ctx, input: { mark: string }) => {
        const step = await ctx.step('load', () => ({ mark: MARKS.step, from: input.mark }));
        await ctx.setState('cart', { mark: MARKS.state });
        const event = await ctx.waitForEvent('approval');
        const child = await ctx.child(kid, { mark: MARKS.childInput });
        const data = await ctx
          .step(
            'fails',
            () => {
              throw new CairnError('INVALID_INPUT', 'declined', { data: { mark: MARKS.errorData } });
            },
            { retries: 0 },
          )
          .catch((error: unknown) => ((error as Error).cause as CairnError).data);
        return { mark: MARKS.output, step, state: await ctx.state('cart'), event, child, data };
      });
      const nightly = defineSchedule({ name: 'codec-nightly', workflow: wf, cron: '0 3 * * *', input: { mark: MARKS.schedule }, paused: true });

      // One engine writes with k1 until the run waits for its event, then stops; an engine with
      // the key rotated (k1 and k2, writing with k2) sends the event and finishes the run.
      const w = await engineWorld(env, [wf, kid], { codec: first, schedules: [nightly] });
      const handle = await w.engine.startRun(wf, { mark: MARKS.input });
      await w.runUntil('the run waits for its event', async () =>
        (await w.raw.steps.load(handle.id)).some((s) => s.kind === 'event' && s.status === 'waiting'),
      );
      await w.engine.stop();
      const second = await w.startEngine([wf, kid], { codec: rotated });
      await second.sendEvent(handle.id, 'approval', { mark: MARKS.event });
      await w.runToEnd(handle.id);

      const run = await second.getRun(handle.id);
      assert.equal(run?.status, 'completed', `${run?.status}: ${run?.error?.message}\n${w.log.join('\n')}`);
      assert.deepStrictEqual(run?.output, {
        mark: MARKS.output,
        step: { mark: MARKS.step, from: MARKS.input },
        state: { mark: MARKS.state },
        event: { mark: MARKS.event },
        child: { got: { mark: MARKS.childInput }, mark: MARKS.childOutput },
        data: { mark: MARKS.errorData },
      });

      // Past the store's API: every row, document and key of the namespace.
      const raw = await env.harness.rawContents?.(env.store, env.namespace);
      assert.ok(raw !== undefined && raw.length > 0, 'the harness read the stored contents');
      const text = raw.join('\n');
      assert.ok(text.includes(handle.id), 'the contents hold the run (so the search looked in the right place)');
      for (const [what, mark] of Object.entries(MARKS))
        assert.ok(!text.includes(mark), `the ${what} is stored in plain text:\n${raw.find((r) => r.includes(mark))?.slice(0, 400)}`);

      // Through the store's API without the codec: envelopes, written with k1 before the rotation and k2 after.
      const stored = await w.raw.runs.get(handle.id);
      assert.ok(isPayloadEnvelope(stored?.input) && stored.input.key === 'k1', 'the input was written with k1');
      assert.ok(isPayloadEnvelope(stored?.output) && stored.output.key === 'k2', 'the output was written with k2');
      const steps = await w.raw.steps.load(handle.id);
      assert.equal((steps.find((s) => s.key === 'load')?.output as { key?: string } | undefined)?.key, 'k1');
      assert.ok(isPayloadEnvelope(steps.find((s) => s.key === 'fails')?.error?.data));
      assert.ok(isPayloadEnvelope((await w.raw.events.get(handle.id, 'approval', 1))?.payload));
      assert.ok(isPayloadEnvelope((await w.raw.schedules.get('codec-nightly'))?.input));

      // Read through the rotated codec: everything decodes; the schedule's input too.
      const reader = codecStore(w.raw, rotated);
      assert.deepStrictEqual((await reader.state.get(handle.id)).cart, { mark: MARKS.state });
      assert.deepStrictEqual((await reader.schedules.get('codec-nightly'))?.input, { mark: MARKS.schedule });
      // A codec without k1 cannot read the input: a typed error naming the run and the key.
      const error = await rejectsWithCode(codecStore(w.raw, aesGcmCodec({ keys: { k2 }, current: 'k2' })).runs.get(handle.id), 'CODEC_ERROR');
      assert.match(error.message, new RegExp(`input of run ${handle.id} \\(key k1\\)`));
    },
    { requires: ['rawContents'] },
  ),
]);
