// createEngine({ codec }): every payload is encoded before the store sees it and decoded when read;
// the AES-256-GCM codec, key rotation, and typed errors for a wrong or missing key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { CairnError, aesGcmCodec, createMemoryStore, defineWorkflow, type Json, type PayloadCodec } from '@cairn/core';
import { AES_GCM_CODEC, codecStore, describeEncoded, isPayloadEnvelope, type WorkflowStore } from '@cairn/core/backend';
import { createFixture, rejectsWithCode, turns, waitForIdle, waitForStatus } from './helpers/engine-fixture.js';

const key = () => randomBytes(32);
const context = { kind: 'input', runId: 'r1' } as const;
/** `codec.encode`, which a codec with a current key has. */
const encode = (codec: PayloadCodec, value: Json) => {
  assert.ok(codec.encode, 'the codec encodes');
  return codec.encode(value, context);
};

/** Everything the store holds for `runId`, read through its own API, as one text. */
async function rawText(store: WorkflowStore, runId: string, events: string[] = []): Promise<string> {
  const parts: unknown[] = [await store.runs.get(runId), await store.steps.load(runId), await store.history.list(runId), await store.state.get(runId)];
  for (const name of events) parts.push(await store.events.get(runId, name, 1));
  return JSON.stringify(parts);
}

describe('aesGcmCodec', () => {
  it('encodes to an envelope naming the codec and the key, holding no plaintext, and decodes it back (__proto__ keys, lone surrogates, NUL)', async () => {
    const codec = aesGcmCodec({ keys: { k1: key() }, current: 'k1' });
    const value = JSON.parse('{"__proto__":{"a":1},"secret":"hunter2","s":"\\ud800 \\u0000","n":[1.5,null,true]}') as Json;
    const envelope = await encode(codec, value);
    assert.equal(envelope['cairn:codec'], AES_GCM_CODEC);
    assert.equal(envelope.key, 'k1');
    assert.ok(isPayloadEnvelope(envelope));
    assert.equal(describeEncoded(envelope), 'encoded (key k1)');
    assert.doesNotMatch(JSON.stringify(envelope), /hunter2|secret/);
    assert.deepStrictEqual(await codec.decode(envelope, context), value);
    assert.notEqual((await encode(codec, value)).data, envelope.data, 'a fresh IV per payload');
  });

  it('rotation: new writes use the current key, payloads of an older key still decode', async () => {
    const k1 = key();
    const before = aesGcmCodec({ keys: { k1 }, current: 'k1' });
    const old = await encode(before, { n: 1 });
    const after = aesGcmCodec({ keys: { k1, k2: key().toString('base64') }, current: 'k2' });
    assert.equal((await encode(after, { n: 2 })).key, 'k2');
    assert.deepStrictEqual(await after.decode(old, context), { n: 1 });
  });

  it('a wrong key, a missing key, a changed key id and altered data are CODEC_ERROR naming the run and the key, never garbage', async () => {
    const envelope = await encode(aesGcmCodec({ keys: { k1: key() }, current: 'k1' }), { n: 1 });
    const wrong = aesGcmCodec({ keys: { k1: key(), k2: key() }, current: 'k1' });
    const failure = await rejectsWithCode(wrong.decode(envelope, context), 'CODEC_ERROR');
    assert.match(failure.message, /input of run r1 \(key k1\): it does not authenticate with key k1/);
    assert.deepStrictEqual(failure.data, { operation: 'decode', kind: 'input', runId: 'r1', codec: AES_GCM_CODEC, key: 'k1' });
    const missing = await rejectsWithCode(aesGcmCodec({ keys: { k2: key() }, current: 'k2' }).decode(envelope, context), 'CODEC_ERROR');
    assert.match(missing.message, /key k1 is not among this codec's keys \(k2\)/);
    await rejectsWithCode(wrong.decode({ ...envelope, key: 'k2' }, context), 'CODEC_ERROR');
    const data = Buffer.from(envelope.data as string, 'base64');
    data[20] = (data[20] as number) ^ 1;
    await rejectsWithCode(wrong.decode({ ...envelope, data: data.toString('base64') }, context), 'CODEC_ERROR');
    await rejectsWithCode(wrong.decode({ 'cairn:codec': 'gzip', data: '' }, context), 'CODEC_ERROR');
  });

  it('refuses keys that are not 32 bytes, bad key ids and a current key it does not have (INVALID_INPUT)', () => {
    assert.throws(
      () => aesGcmCodec({ keys: { k1: randomBytes(16) }, current: 'k1' }),
      (e) => CairnError.is(e, 'INVALID_INPUT') && /32 bytes/.test(e.message),
    );
    assert.throws(
      () => aesGcmCodec({ keys: { 'k 1': key() }, current: 'k 1' }),
      (e) => CairnError.is(e, 'INVALID_INPUT'),
    );
    assert.throws(
      () => aesGcmCodec({ keys: { k1: key() }, current: 'k2' }),
      (e) => CairnError.is(e, 'INVALID_INPUT') && /k2/.test(e.message),
    );
  });

  it('says how large a payload fits in a store limit once encrypted', async () => {
    const id = `longest-key-id-${'a'.repeat(64)}`.slice(0, 64);
    const codec = aesGcmCodec({ keys: { [id]: key() }, current: id });
    const limit = 10_000;
    const fits = codec.maxPayloadBytes?.(limit) as number;
    const envelope = await encode(codec, 'x'.repeat(fits - 2)); // a string's JSON adds two quotes
    assert.ok(Buffer.byteLength(JSON.stringify(envelope)) <= limit, `${Buffer.byteLength(JSON.stringify(envelope))} <= ${limit}`);
    assert.ok(fits > limit * 0.7);
  });
});

describe('createEngine({ codec })', () => {
  it('the store holds only envelopes: input, output, step output, state, event payload, child input and output, error data; the engine reads them back', async () => {
    const codec = aesGcmCodec({ keys: { k1: key() }, current: 'k1' });
    const kid = defineWorkflow('codec-kid', async (_ctx, input: Json) => ({ kidSaw: input, mark: 'KID-OUTPUT' }));
    const seen: unknown[] = [];
    const wf = defineWorkflow('codec-all', async (ctx, input: { card: string }) => {
      const step = await ctx.step('charge', () => ({ charged: input.card, mark: 'STEP-OUTPUT' }));
      await ctx.setState('cart', { mark: 'STATE-VALUE' });
      const event = await ctx.waitForEvent('approval');
      const child = await ctx.child(kid, { mark: 'CHILD-INPUT' });
      const data = await ctx
        .step(
          'fails',
          () => {
            throw new CairnError('INVALID_INPUT', 'declined', { data: { mark: 'ERROR-DATA' } });
          },
          { retries: 0 },
        )
        .catch((error: unknown) => ((error as Error).cause as CairnError).data);
      seen.push({ step, state: await ctx.state('cart'), event, child, data });
      return { mark: 'RUN-OUTPUT', step };
    });
    const fx = await createFixture({ workflows: [wf, kid], codec });
    try {
      const h = await fx.engine.startRun(wf, { card: 'CARD-4242' });
      await waitForIdle(fx.inner, h.id);
      await fx.engine.sendEvent(h.id, 'approval', { mark: 'EVENT-PAYLOAD' });
      await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
      const output = await h.result();
      assert.deepStrictEqual(output, { mark: 'RUN-OUTPUT', step: { charged: 'CARD-4242', mark: 'STEP-OUTPUT' } });
      assert.deepStrictEqual(seen.at(-1), {
        step: { charged: 'CARD-4242', mark: 'STEP-OUTPUT' },
        state: { mark: 'STATE-VALUE' },
        event: { mark: 'EVENT-PAYLOAD' },
        child: { kidSaw: { mark: 'CHILD-INPUT' }, mark: 'KID-OUTPUT' },
        data: { mark: 'ERROR-DATA' },
      });
      const childId = (await fx.inner.steps.load(h.id)).find((s) => s.kind === 'child')?.childRunId as string;
      const raw = (await rawText(fx.inner, h.id, ['approval'])) + (await rawText(fx.inner, childId));
      for (const mark of ['CARD-4242', 'STEP-OUTPUT', 'STATE-VALUE', 'EVENT-PAYLOAD', 'CHILD-INPUT', 'KID-OUTPUT', 'ERROR-DATA', 'RUN-OUTPUT']) {
        assert.ok(!raw.includes(mark), `${mark} is not in the store`);
      }
      assert.ok(isPayloadEnvelope((await fx.inner.runs.get(h.id))?.input));
      // The engine's reads decode.
      assert.deepStrictEqual((await fx.engine.getRun(h.id))?.input, { card: 'CARD-4242' });
      assert.deepStrictEqual((await fx.engine.state(h.id)).cart, { mark: 'STATE-VALUE' });
      assert.deepStrictEqual((await fx.engine.steps(h.id)).find((s) => s.key === 'fails')?.error?.data, { mark: 'ERROR-DATA' });
    } finally {
      await fx.engine.stop();
    }
  });

  it('a codec that throws on encode fails startRun with CODEC_ERROR and writes nothing', async () => {
    const broken: PayloadCodec = {
      encode: async () => {
        throw new Error('key service unreachable');
      },
      decode: async () => null,
    };
    const wf = defineWorkflow('codec-broken', async () => 1);
    const fx = await createFixture({ workflows: [wf], codec: broken });
    try {
      const error = await rejectsWithCode(fx.engine.startRun(wf, { a: 1 }), 'CODEC_ERROR');
      assert.match(error.message, /Cannot encode the input of run .*: key service unreachable/);
      assert.equal((await fx.inner.runs.list({ limit: 10 })).runs.length, 0, 'nothing written');
    } finally {
      await fx.engine.stop();
    }
  });

  it('a codec that returns no envelope is refused with CODEC_ERROR', async () => {
    const plain = codecStore(createMemoryStore(), { encode: async (v) => v as never, decode: async (v) => v as never });
    await rejectsWithCode(plain.runs.create({ id: 'r1', workflow: 'w', version: '1', input: { a: 1 } }, 0), 'CODEC_ERROR');
  });

  it('reading with a codec that lacks the key is CODEC_ERROR naming the run and the key id; plaintext written before the codec reads as it is', async () => {
    const inner = createMemoryStore();
    const writer = codecStore(inner, aesGcmCodec({ keys: { k1: key() }, current: 'k1' }));
    await writer.runs.create({ id: 'r1', workflow: 'w', version: '1', input: { a: 1 } }, 0);
    await inner.runs.create({ id: 'r0', workflow: 'w', version: '1', input: { before: true } }, 0);
    const reader = codecStore(inner, aesGcmCodec({ keys: { k2: key() }, current: 'k2' }));
    const error = await rejectsWithCode(reader.runs.get('r1'), 'CODEC_ERROR');
    assert.match(error.message, /run r1 \(key k1\)/);
    assert.deepStrictEqual(error.data, { operation: 'decode', kind: 'input', runId: 'r1', codec: AES_GCM_CODEC, key: 'k1' });
    assert.deepStrictEqual((await reader.runs.get('r0'))?.input, { before: true });
  });

  it('a payload the codec cannot decode during an execution leaves the run as it is (an outage, like STORE_ERROR), never failed', async () => {
    const wf = defineWorkflow('codec-missing-key', async (ctx) => ctx.waitForEvent('go'));
    const k1 = key();
    const k9 = key();
    const fx = await createFixture({ workflows: [wf], codec: aesGcmCodec({ keys: { k1 }, current: 'k1' }) });
    try {
      const h = await fx.engine.startRun(wf, null);
      await waitForIdle(fx.inner, h.id);
      // A message encoded with a key this engine does not have (another service's configuration).
      await codecStore(fx.inner, aesGcmCodec({ keys: { k9 }, current: 'k9' })).events.deliver(h.id, 'go', { n: 1 }, fx.clock.now());
      await fx.engine.recover();
      await turns(2_000);
      const run = await fx.inner.runs.get(h.id);
      assert.ok(run?.status !== 'failed' && run?.status !== 'completed', `the run is ${run?.status}: ${run?.error?.message}`);
      // Given the key, an engine finishes it once the abandoned execution's lease has expired.
      await fx.engine.stop();
      const fixed = await createFixture({ workflows: [wf], codec: aesGcmCodec({ keys: { k1, k9 }, current: 'k1' }), counter: fx.counter, clock: fx.clock });
      try {
        await fx.clock.advance(60_000);
        await fixed.engine.recover();
        await waitForStatus(fx.inner, h.id, ['completed', 'failed']);
        assert.deepStrictEqual(await fixed.engine.result(h.id), { n: 1 });
      } finally {
        await fixed.engine.stop();
      }
    } finally {
      await fx.engine.stop();
    }
  });

  it('rolling out: a decode-only codec (aesGcmCodec without current) writes payloads as they are and reads envelopes', async () => {
    const k1 = key();
    const inner = createMemoryStore();
    const readOnly = codecStore(inner, aesGcmCodec({ keys: { k1 } }));
    assert.equal(aesGcmCodec({ keys: { k1 } }).encode, undefined);
    await readOnly.runs.create({ id: 'plain', workflow: 'w', version: '1', input: { a: 1 } }, 0);
    assert.deepStrictEqual((await inner.runs.get('plain'))?.input, { a: 1 }, 'written as it is');
    await codecStore(inner, aesGcmCodec({ keys: { k1 }, current: 'k1' })).runs.create({ id: 'sealed', workflow: 'w', version: '1', input: { b: 2 } }, 0);
    assert.ok(isPayloadEnvelope((await inner.runs.get('sealed'))?.input));
    assert.deepStrictEqual((await readOnly.runs.get('sealed'))?.input, { b: 2 }, 'an envelope is read');
    assert.equal(readOnly.capabilities.maxPayloadBytes, inner.capabilities.maxPayloadBytes);
  });

  it('keeps the optional members of the store it wraps, and lowers maxPayloadBytes to what fits once encoded', () => {
    const inner = createMemoryStore();
    const wrapped = codecStore(inner, aesGcmCodec({ keys: { k1: key() }, current: 'k1' }));
    assert.equal(wrapped.slots, inner.slots);
    assert.equal(wrapped.signals, inner.signals);
    assert.equal(typeof wrapped.doctor, typeof inner.doctor);
    assert.ok(wrapped.capabilities.maxPayloadBytes < inner.capabilities.maxPayloadBytes);
    assert.equal(wrapped.capabilities.insertFinished, inner.capabilities.insertFinished);
  });
});
