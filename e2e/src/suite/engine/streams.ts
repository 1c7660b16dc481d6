import assert from 'node:assert/strict';
import { type Engine, type Json, type StreamChunk, defineWorkflow } from '@cairn/core';
import { STREAM_LIMITS } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { type EngineWorld, engineWorld, storesFor } from './engine-world.js';

/** Reads a stream to its end (or `count` chunks), in the background: the caller drives the clock meanwhile. */
function collect(engine: Engine, runId: string, name: string, options: { from?: number; count?: number } = {}): Promise<StreamChunk[]> {
  return (async () => {
    const out: StreamChunk[] = [];
    for await (const chunk of engine.readStream(runId, name, options.from === undefined ? {} : { from: options.from })) {
      out.push(chunk);
      if (out.length === options.count) break;
    }
    return out;
  })();
}

/**
 * Waits for a reader while moving the world's clock: over a store without signals a reader looks at
 * the store on its poll timer, which only the clock fires.
 */
async function drained<T>(w: EngineWorld, reader: Promise<T>): Promise<T> {
  let done = false;
  const result = reader.finally(() => {
    done = true;
  });
  result.catch(() => {});
  for (let i = 0; i < 1000 && !done; i += 1) {
    await w.settle();
    if (done) break;
    await w.clock.advanceToNextTimer();
  }
  return result;
}

const values = (chunks: readonly StreamChunk[]) => chunks.map((c) => [c.index, c.data]);

// Emits `tokens` chunks around a retried step, a sleep (a second execution replays every emit) and
// two branches, then closes the stream.
const tokens = defineWorkflow('stream-tokens', async (ctx, input: { n: number }) => {
  await ctx.emit('tokens', 'start');
  // The attempt number comes from the step, not a counter in the handler: a retry whose backoff
  // suspends the run runs in a new execution, where a handler-local counter starts again at 0.
  const word = await ctx.step(
    'flaky',
    (step) => {
      if (step.attempt === 1) throw new Error('once');
      return 'word';
    },
    { retries: 1, backoff: { type: 'fixed', delay: 10 } },
  );
  await ctx.emit('tokens', { word });
  await ctx.sleep('nap', '1m');
  const out = ctx.stream<{ i: number }>('tokens');
  for (let i = 0; i < input.n; i += 1) await out.write({ i });
  await Promise.all([ctx.emit('side', 'a'), ctx.emit('side', 'b')]);
  await out.close();
  return 'done';
});

// Emits `n` chunks to one stream at once, twice (the second burst after a sleep, so a replay makes
// the first burst's calls again): a store with a connection pool commits concurrent appends in any order.
const burst = defineWorkflow('stream-burst', async (ctx, input: { n: number }) => {
  await Promise.all(Array.from({ length: input.n }, (_, i) => ctx.emit('burst', i)));
  await ctx.sleep('nap', '1m');
  await Promise.all(Array.from({ length: input.n }, () => ctx.emit('burst', 'again')));
  return 'done';
});

/** Engine scenarios: named streams (`ctx.emit`, `engine.readStream`). */
export const streamsEngineGroup: CaseGroup = caseGroup('engine.streams', 'engine: streams', [
  conformanceCase(
    'a reader from the start gets every chunk once, in order, through a retry and a replay, then the end',
    async (env) => {
      const w = await engineWorld(env, [tokens]);
      const handle = await w.engine.startRun(tokens, { n: 5 });
      const live = collect(w.engine, handle.id, 'tokens');
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', `the run ended ${run.status}: ${JSON.stringify(run.error)}`);
      const expected = [[0, 'start'], [1, { word: 'word' }], ...Array.from({ length: 5 }, (_, i) => [i + 2, { i }])];
      assert.deepEqual(values(await drained(w, live)), expected);
      // After the end: the same from the store, and each chunk written once (the replay wrote nothing).
      assert.deepEqual(values(await drained(w, collect(w.engine, handle.id, 'tokens'))), expected);
      const appends = w.store.calls.filter((c) => c.method === 'streams.append' && c.runId === handle.id && c.outcome?.ok === true);
      assert.equal(
        appends.filter((c) => (c.outcome as { value: { created: boolean } }).value.created).length,
        7 + 1 + 2,
        'the seven chunks, the end marker and the two side chunks are written once each',
      );
      assert.deepEqual(
        (await w.engine.listStreams(handle.id)).sort((a, b) => (a.stream < b.stream ? -1 : 1)),
        [
          { stream: 'side', length: 2, closed: false },
          { stream: 'tokens', length: 7, closed: true },
        ],
      );
      assert.deepEqual(
        (await drained(w, collect(w.engine, handle.id, 'side'))).map((c) => c.index),
        [0, 1],
        'a stream left open ends for readers with its run',
      );
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'a reader resumes exactly from `from`; from = length waits, past the end is STREAM_RANGE',
    async (env) => {
      const w = await engineWorld(env, [tokens]);
      const handle = await w.engine.startRun(tokens, { n: 3 });
      await w.runUntil('the run sleeps', async () => (await w.raw.runs.get(handle.id))?.status === 'waiting');
      // Two chunks so far: from 2 waits for the third, from 3 is past the end.
      await rejectsWithCode(drained(w, collect(w.engine, handle.id, 'tokens', { from: 3 })), 'STREAM_RANGE');
      const fromTwo = collect(w.engine, handle.id, 'tokens', { from: 2 });
      const firstTwo = await drained(w, collect(w.engine, handle.id, 'tokens', { count: 2 }));
      assert.deepEqual(values(firstTwo), [
        [0, 'start'],
        [1, { word: 'word' }],
      ]);
      await w.runToEnd(handle.id);
      assert.deepEqual(values(await drained(w, fromTwo)), [
        [2, { i: 0 }],
        [3, { i: 1 }],
        [4, { i: 2 }],
      ]);
      assert.deepEqual(values(await drained(w, collect(w.engine, handle.id, 'tokens', { from: 4 }))), [[4, { i: 2 }]]);
      assert.deepEqual(await drained(w, collect(w.engine, handle.id, 'tokens', { from: 5 })), [], 'from = length of a closed stream: nothing, at once');
      await rejectsWithCode(drained(w, collect(w.engine, handle.id, 'tokens', { from: 6 })), 'STREAM_RANGE');
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'bad input: typed errors and nothing written',
    async (env) => {
      const seen: string[] = [];
      const wf = defineWorkflow('stream-refusals', async (ctx) => {
        for (const attempt of [
          () => ctx.emit('big', 'x'.repeat(STREAM_LIMITS.maxChunkBytes)),
          () => ctx.emit('fn', (() => 1) as unknown as Json),
          () => ctx.emit('', 'empty name'),
        ]) {
          try {
            await attempt();
            seen.push('written');
          } catch (error) {
            seen.push((error as { code?: string }).code ?? 'untyped');
          }
        }
        await ctx.emit('s', 1);
        await ctx.closeStream('s');
        await ctx.closeStream('s');
        try {
          await ctx.emit('s', 2);
        } catch (error) {
          seen.push((error as { code?: string }).code ?? 'untyped');
        }
        return 'ok';
      });
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, null);
      await w.runToEnd(handle.id);
      assert.deepEqual(seen, ['STREAM_LIMIT', 'NOT_SERIALIZABLE', 'INVALID_INPUT', 'STREAM_CONFLICT']);
      assert.deepEqual(await w.engine.listStreams(handle.id), [{ stream: 's', length: 1, closed: true }]);
      const before = w.store.writes().length;
      await rejectsWithCode(drained(w, collect(w.engine, 'no-such-run', 's')), 'RUN_NOT_FOUND');
      await rejectsWithCode(w.engine.listStreams('no-such-run'), 'RUN_NOT_FOUND');
      await rejectsWithCode(drained(w, collect(w.engine, handle.id, 'never-written')), 'STREAM_NOT_FOUND');
      for (const options of [{ from: -1 }, { from: 1.5 }, { from: '1' }, { pollInterval: 0 }, { nope: 1 }]) {
        assert.throws(() => w.engine.readStream(handle.id, 's', options as never), { code: 'INVALID_INPUT' }, JSON.stringify(options));
      }
      assert.throws(() => w.engine.readStream(handle.id, '' as string), { code: 'INVALID_INPUT' });
      assert.throws(() => w.engine.readStream(42 as unknown as string, 's'), { code: 'INVALID_INPUT' });
      assert.equal(w.store.writes().length, before, 'readers write nothing');
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'a reader that leaves mid-stream holds nothing: no more reads after it left',
    async (env) => {
      const wf = defineWorkflow('stream-slow', async (ctx) => {
        for (let i = 0; i < 3; i += 1) {
          await ctx.emit('ticks', i);
          await ctx.sleep(`tick-${i}`, '1m');
        }
        return 'done';
      });
      const w = await engineWorld(env, [wf]);
      const handle = await w.engine.startRun(wf, null);
      const controller = new AbortController();
      const early = collect(w.engine, handle.id, 'ticks', { count: 1 });
      const aborted = (async () => {
        for await (const _ of w.engine.readStream(handle.id, 'ticks', { signal: controller.signal })) controller.abort(new Error('client gone'));
      })().then(
        () => 'ended',
        (error: unknown) => error,
      );
      await w.runUntil('the first tick', async () => (await w.raw.streams?.list(handle.id))?.[0]?.length === 1);
      assert.deepEqual(values(await drained(w, early)), [[0, 0]]);
      assert.match(String(await drained(w, aborted)), /client gone/, 'an aborted reader throws the reason');
      await w.settle();
      const reads = w.store.count('streams.read');
      await w.runToEnd(handle.id);
      assert.equal(w.store.count('streams.read'), reads, 'readers that left read nothing more');
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'emits made at once to one stream land in call order, each once, whatever order the store commits them in',
    async (env) => {
      const w = await engineWorld(env, [burst]);
      const handle = await w.engine.startRun(burst, { n: 24 });
      const run = await w.runToEnd(handle.id);
      assert.equal(run.status, 'completed', `the run ended ${run.status}: ${JSON.stringify(run.error)}`);
      const expected = Array.from({ length: 24 }, (_, i) => [i, i]);
      assert.deepEqual(values(await drained(w, collect(w.engine, handle.id, 'burst'))), [
        ...expected,
        ...Array.from({ length: 24 }, (_, i) => [i + 24, 'again']),
      ]);
    },
    { requires: ['streams'] },
  ),

  conformanceCase(
    'a reader in another process gets the chunks as they are written',
    async (env) => {
      const [, peer] = await storesFor(env, 2);
      const w = await engineWorld(env, [tokens]);
      const reader = await w.startEngine([], { store: peer, noWorkers: true });
      const handle = await w.engine.startRun(tokens, { n: 4 });
      const live = collect(reader, handle.id, 'tokens');
      await w.runToEnd(handle.id);
      assert.deepEqual(values(await drained(w, live)), [[0, 'start'], [1, { word: 'word' }], ...Array.from({ length: 4 }, (_, i) => [i + 2, { i }])]);
    },
    { requires: ['streams'] },
  ),
]);
