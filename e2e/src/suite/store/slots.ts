import assert from 'node:assert/strict';
import type { SlotSnapshot, SlotStore, SlotWait, WorkflowStore } from '@cairn/core/backend';
import { caseGroup, conformanceCase, type CaseEnv, type CaseGroup } from '../case.js';
import { rejectsWithCode } from '../fixtures/assertions.js';
import { MALFORMED_IDENTIFIERS, NOT_STRINGS, show } from '../fixtures/hostile-arguments.js';
import { HOSTILE_NAMES, label } from '../fixtures/hostile-strings.js';
import { Rng } from '../fixtures/random-program.js';
import { SlotModel } from '../fixtures/slot-model.js';

const slotsOf = (store: WorkflowStore): SlotStore => store.slots!;

/** `inspect` with holders sorted by holder (the contract orders only the waiters). */
async function inspect(slots: SlotStore, key: string, now: number): Promise<SlotSnapshot> {
  const snapshot = await slots.inspect(key, now);
  return { holders: [...snapshot.holders].sort((a, b) => (a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : 0)), waiters: snapshot.waiters };
}

const holdersOf = (snapshot: SlotSnapshot): string[] => snapshot.holders.map((h) => h.holder).sort();
const waitersOf = (snapshot: SlotSnapshot): string[] => snapshot.waiters.map((w) => w.holder);

/** A wait entry that lives long enough for any case. */
const waitAt = (t0: number, priority: number, queuedAt: number): SlotWait => ({ priority, queuedAt, expiresAt: t0 + 60_000 });

/** The seeds of the generator case: `CAIRN_SLOTS_SEED=N` runs that one only. */
function slotSeeds(): number[] {
  const one = process.env.CAIRN_SLOTS_SEED;
  if (one !== undefined && one.trim() !== '') return [Number(one)];
  // Four seeds of 50 steps: ~400 round trips, under 2 s on FerretDB, the slowest backend.
  return [1, 2, 3, 4];
}

/** One generator run: random acquire / renew / release / time steps on one key, each answer and `inspect` checked against `SlotModel`. */
async function runSlotSequence(slots: SlotStore, key: string, seed: number, t0: number): Promise<void> {
  const rng = new Rng(seed);
  const limit = rng.int(1, 3);
  const model = new SlotModel(limit);
  const pool = ['h0', 'h1', 'h2', 'h3', 'h4'];
  const log: string[] = [`limit ${limit}`];
  let now = t0;
  const fail = (step: number, message: string): never => {
    assert.fail(`seed ${seed} (rerun with CAIRN_SLOTS_SEED=${seed}), step ${step}: ${message}\n  ${log.slice(-12).join('\n  ')}`);
  };
  for (let step = 0; step < 50; step += 1) {
    const holder = rng.pick(pool);
    const roll = rng.float();
    if (roll < 0.15) {
      now += rng.int(0, 60);
      log.push(`now = t0+${now - t0}`);
    } else if (roll < 0.6) {
      const wait = rng.chance(0.6) ? { priority: rng.int(-1, 1), queuedAt: t0 + rng.int(0, 3), expiresAt: now + rng.int(1, 150) } : undefined;
      const expiresAt = now + rng.int(1, 100);
      const expected = (() => {
        try {
          return model.expectAcquire({ holder, wait }, now);
        } catch (error) {
          return fail(step, String(error));
        }
      })();
      const grant = await slots.acquire({ key, limit, holder, expiresAt, ...(wait === undefined ? {} : { wait }) }, now);
      log.push(
        `acquire ${holder} until +${expiresAt - t0}${wait ? ` wait(p${wait.priority}, q${wait.queuedAt - t0}, until +${wait.expiresAt - t0})` : ''} → ${JSON.stringify(grant)}`,
      );
      if (expected === 'either') {
        if (grant.acquired === false && grant.freeAt !== undefined) fail(step, 'a refusal with a free slot has no freeAt');
      } else if (!grant.acquired || !expected.acquired) {
        const actual = grant.acquired ? grant : { acquired: false, ...(grant.freeAt === undefined ? {} : { freeAt: grant.freeAt }) };
        if (JSON.stringify(actual) !== JSON.stringify(expected)) fail(step, `expected ${JSON.stringify(expected)}`);
      }
      try {
        model.settleAcquire({ holder, wait, expiresAt }, now, grant.acquired);
      } catch (error) {
        fail(step, String(error));
      }
    } else if (roll < 0.8) {
      const expiresAt = now + rng.int(-20, 100);
      const expected = model.expectRenew(holder, now);
      const renewed = await slots.renew(key, holder, expiresAt, now);
      log.push(`renew ${holder} until +${expiresAt - t0} → ${renewed}`);
      if (expected !== 'either' && renewed !== expected) fail(step, `expected ${expected}`);
      try {
        model.settleRenew(holder, expiresAt, renewed);
      } catch (error) {
        fail(step, String(error));
      }
    } else {
      const expected = model.release(holder, now);
      const next = await slots.release(key, holder, now);
      log.push(`release ${holder} → ${String(next)}`);
      if (next !== expected) fail(step, `expected ${String(expected)}`);
    }
    const actual = await inspect(slots, key, now);
    const expected = model.snapshot(now);
    if (JSON.stringify(actual) !== JSON.stringify(expected)) fail(step, `inspect ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }
}

/** Store contract: slots (the primitive of concurrency and rate limits). */
export const slotsGroup: CaseGroup = caseGroup(
  'store.slots',
  'store: slots',
  [
    conformanceCase('acquire grants up to limit, then refuses with freeAt = the earliest expiry, recording nothing without wait', async ({ store, t0 }) => {
      const slots = slotsOf(store);
      const key = 'c:tenant-a';
      const ends = { a: t0 + 300, b: t0 + 100, c: t0 + 200 };
      for (const [holder, expiresAt] of Object.entries(ends))
        assert.deepEqual(await slots.acquire({ key, limit: 3, holder, expiresAt }, t0), { acquired: true }, holder);
      assert.deepEqual(await slots.acquire({ key, limit: 3, holder: 'd', expiresAt: t0 + 500 }, t0), { acquired: false, freeAt: t0 + 100 });
      assert.deepEqual(await inspect(slots, key, t0), { holders: Object.entries(ends).map(([holder, expiresAt]) => ({ holder, expiresAt })), waiters: [] });
      // Keys are independent: another key has its own slots.
      assert.deepEqual(await slots.acquire({ key: 'c:tenant-b', limit: 1, holder: 'd', expiresAt: t0 + 500 }, t0), { acquired: true });
      assert.deepEqual(await inspect(slots, 'c:tenant-z', t0), { holders: [], waiters: [] }, 'an unknown key has neither holders nor waiters');
    }),

    conformanceCase('a slot whose expiresAt <= now is free again; once taken over its old holder renews false', async ({ store, t0 }) => {
      const slots = slotsOf(store);
      const key = 'r:api';
      assert.deepEqual(await slots.acquire({ key, limit: 1, holder: 'a', expiresAt: t0 + 100 }, t0), { acquired: true });
      assert.deepEqual(await slots.acquire({ key, limit: 1, holder: 'b', expiresAt: t0 + 300 }, t0 + 99), { acquired: false, freeAt: t0 + 100 });
      assert.deepEqual(await inspect(slots, key, t0 + 100), { holders: [], waiters: [] }, 'an expired holder is not listed');
      assert.deepEqual(await slots.acquire({ key, limit: 1, holder: 'b', expiresAt: t0 + 300 }, t0 + 100), { acquired: true }, 'expiresAt == now is expired');
      assert.equal(await slots.renew(key, 'a', t0 + 900, t0 + 101), false, 'the old holder lost its slot');
      assert.equal(await slots.renew(key, 'b', t0 + 400, t0 + 101), true);
      assert.deepEqual(await inspect(slots, key, t0 + 101), { holders: [{ holder: 'b', expiresAt: t0 + 400 }], waiters: [] });
      assert.equal(await slots.renew(key, 'nobody', t0 + 900, t0 + 101), false, 'a holder that never held renews false');
      assert.equal(await slots.renew('r:other', 'b', t0 + 900, t0 + 101), false, 'a slot of another key is not renewed');
    }),

    conformanceCase("an expired slot nobody took is still its holder's: renew and acquire keep it", async ({ store, t0 }) => {
      const slots = slotsOf(store);
      const key = 'c:k';
      await slots.acquire({ key, limit: 1, holder: 'a', expiresAt: t0 + 100 }, t0);
      assert.equal(await slots.renew(key, 'a', t0 + 500, t0 + 150), true, 'not taken over: still held');
      assert.deepEqual(await inspect(slots, key, t0 + 150), { holders: [{ holder: 'a', expiresAt: t0 + 500 }], waiters: [] });
      assert.deepEqual(await slots.acquire({ key, limit: 1, holder: 'b', expiresAt: t0 + 900 }, t0 + 150), { acquired: false, freeAt: t0 + 500 });
      assert.deepEqual(
        await slots.acquire({ key, limit: 1, holder: 'a', expiresAt: t0 + 700 }, t0 + 600),
        { acquired: true },
        'expired again, asked again: granted',
      );
      assert.deepEqual(await inspect(slots, key, t0 + 600), { holders: [{ holder: 'a', expiresAt: t0 + 700 }], waiters: [] });
    }),

    conformanceCase('acquire by a holder that holds extends (never shortens), leaves the line and takes no second slot', async ({ store, t0 }) => {
      const slots = slotsOf(store);
      const key = 'c:k';
      await slots.acquire({ key, limit: 2, holder: 'a', expiresAt: t0 + 500 }, t0);
      assert.deepEqual(await slots.acquire({ key, limit: 2, holder: 'a', expiresAt: t0 + 200 }, t0 + 1), { acquired: true });
      assert.deepEqual((await inspect(slots, key, t0 + 1)).holders, [{ holder: 'a', expiresAt: t0 + 500 }], 'an earlier expiresAt does not shorten');
      assert.deepEqual(await slots.acquire({ key, limit: 2, holder: 'a', expiresAt: t0 + 800, wait: waitAt(t0, 0, t0) }, t0 + 2), { acquired: true });
      assert.equal(await slots.renew(key, 'a', t0 + 300, t0 + 3), true);
      assert.deepEqual((await inspect(slots, key, t0 + 3)).holders, [{ holder: 'a', expiresAt: t0 + 800 }], 'later extends; renew does not shorten');
      assert.deepEqual(
        await slots.acquire({ key, limit: 2, holder: 'b', expiresAt: t0 + 900 }, t0 + 4),
        { acquired: true },
        'a holds one slot, so one is free',
      );
      assert.deepEqual(await slots.acquire({ key, limit: 2, holder: 'c', expiresAt: t0 + 900, wait: waitAt(t0, 0, t0) }, t0 + 5), {
        acquired: false,
        freeAt: t0 + 800,
      });
      // A full key still grants its holders again, and a holder that was waiting leaves the line.
      assert.deepEqual(await slots.acquire({ key, limit: 2, holder: 'b', expiresAt: t0 + 950 }, t0 + 6), { acquired: true });
      assert.equal(await slots.release(key, 'a', t0 + 7), 'c');
      assert.deepEqual(await slots.acquire({ key, limit: 2, holder: 'c', expiresAt: t0 + 990, wait: waitAt(t0, 0, t0) }, t0 + 8), { acquired: true });
      assert.deepEqual(await inspect(slots, key, t0 + 8), {
        holders: [
          { holder: 'b', expiresAt: t0 + 950 },
          { holder: 'c', expiresAt: t0 + 990 },
        ],
        waiters: [],
      });
    }),

    conformanceCase('release frees the slot and returns the first waiter in line: priority desc, queuedAt asc, holder asc', async ({ store, t0 }) => {
      const slots = slotsOf(store);
      const key = 'c:line';
      await slots.acquire({ key, limit: 1, holder: 'a', expiresAt: t0 + 1000 }, t0);
      const waits: Array<[string, SlotWait]> = [
        ['wb', waitAt(t0, 0, t0 + 5)],
        ['x', waitAt(t0, 5, t0 + 20)],
        ['v', waitAt(t0, -3, t0 + 1)],
        ['wa', waitAt(t0, 0, t0 + 5)],
        ['y', waitAt(t0, 5, t0 + 10)],
      ];
      for (const [holder, wait] of waits) {
        assert.deepEqual(await slots.acquire({ key, limit: 1, holder, expiresAt: t0 + 2000, wait }, t0 + 1), { acquired: false, freeAt: t0 + 1000 }, holder);
      }
      const line = ['y', 'x', 'wa', 'wb', 'v'];
      const snapshot = await inspect(slots, key, t0 + 2);
      assert.deepEqual(
        snapshot.waiters,
        line.map((holder) => ({ holder, ...waits.find(([h]) => h === holder)![1] })),
        'inspect lists waiters in line order with their entries',
      );
      assert.equal(await slots.release(key, 'nobody', t0 + 2), 'y', 'a release that frees nothing still names the first waiter');
      assert.deepEqual(holdersOf(await inspect(slots, key, t0 + 2)), ['a'], 'and changes nothing');
      assert.equal(await slots.release(key, 'a', t0 + 3), 'y');
      assert.deepEqual(holdersOf(await inspect(slots, key, t0 + 3)), []);
      assert.deepEqual(
        await slots.acquire({ key, limit: 1, holder: 'x', expiresAt: t0 + 2000, wait: waits[1]![1] }, t0 + 4),
        { acquired: false },
        'y is ahead of x: refused, and no freeAt while a slot is free',
      );
      assert.deepEqual(await slots.acquire({ key, limit: 1, holder: 'y', expiresAt: t0 + 2000, wait: waits[4]![1] }, t0 + 5), { acquired: true });
      assert.deepEqual(waitersOf(await inspect(slots, key, t0 + 5)), ['x', 'wa', 'wb', 'v'], 'the granted waiter left the line');
      assert.equal(await slots.release(key, 'x', t0 + 6), 'wa', 'a waiter that releases leaves the line');
      assert.equal(await slots.release(key, 'y', t0 + 7), 'wa');
      for (const holder of ['wa', 'wb', 'v']) await slots.release(key, holder, t0 + 8);
      assert.equal(await slots.release(key, 'y', t0 + 8), undefined, 'nobody waits');
      assert.deepEqual(await inspect(slots, key, t0 + 8), { holders: [], waiters: [] });
    }),

    conformanceCase(
      'waiters ahead hold a slot back from a newcomer with wait (granted once free slots outnumber them), never from one without',
      async ({ store, t0 }) => {
        const slots = slotsOf(store);
        const key = 'c:k';
        const ask = (holder: string, wait?: SlotWait, now = t0 + 10) =>
          slots.acquire({ key, limit: 3, holder, expiresAt: t0 + 5000, ...(wait === undefined ? {} : { wait }) }, now);
        for (const holder of ['a', 'b', 'c']) await ask(holder, undefined, t0);
        assert.deepEqual(await ask('w1', waitAt(t0, 5, t0 + 1)), { acquired: false, freeAt: t0 + 5000 });
        assert.deepEqual(await ask('w2', waitAt(t0, 0, t0 + 1)), { acquired: false, freeAt: t0 + 5000 });
        assert.equal(await slots.release(key, 'a', t0 + 11), 'w1');
        // One free slot, two waiters: a newcomer with wait queues behind them, even w2 waits for w1.
        assert.deepEqual(await ask('n', waitAt(t0, 0, t0 + 2), t0 + 12), { acquired: false });
        assert.deepEqual(await ask('w2', waitAt(t0, 0, t0 + 1), t0 + 12), { acquired: false }, 'w1 is ahead of w2');
        assert.deepEqual(waitersOf(await inspect(slots, key, t0 + 12)), ['w1', 'w2', 'n']);
        assert.equal(await slots.release(key, 'b', t0 + 13), 'w1');
        // Two free slots, one waiter ahead of w2: w2 is granted.
        assert.deepEqual(await ask('w2', waitAt(t0, 0, t0 + 1), t0 + 14), { acquired: true }, 'free slots (2) outnumber the waiters ahead (1)');
        // A higher priority goes ahead of everyone: nobody is ahead of it, one slot is free.
        assert.deepEqual(await ask('urgent', waitAt(t0, 9, t0 + 9), t0 + 15), { acquired: true });
        assert.deepEqual(waitersOf(await inspect(slots, key, t0 + 15)), ['w1', 'n']);
        assert.equal(await slots.release(key, 'c', t0 + 16), 'w1');
        // Without wait a free slot is granted whatever waits, and the line is left as it was.
        assert.deepEqual(await ask('plain', undefined, t0 + 17), { acquired: true });
        assert.deepEqual(await inspect(slots, key, t0 + 17), {
          holders: ['plain', 'urgent', 'w2'].map((holder) => ({ holder, expiresAt: t0 + 5000 })),
          waiters: [
            { holder: 'w1', ...waitAt(t0, 5, t0 + 1) },
            { holder: 'n', ...waitAt(t0, 0, t0 + 2) },
          ],
        });
        assert.deepEqual(await ask('late', undefined, t0 + 18), { acquired: false, freeAt: t0 + 5000 });
        assert.deepEqual(waitersOf(await inspect(slots, key, t0 + 18)), ['w1', 'n'], 'a refusal without wait records nothing');
      },
    ),

    conformanceCase('an expired waiter neither blocks, nor is listed or returned; asking again refreshes the entry', async ({ store, t0 }) => {
      const slots = slotsOf(store);
      const key = 'c:k';
      await slots.acquire({ key, limit: 1, holder: 'a', expiresAt: t0 + 1000 }, t0);
      await slots.acquire({ key, limit: 1, holder: 'gone', expiresAt: t0 + 2000, wait: { priority: 9, queuedAt: t0, expiresAt: t0 + 100 } }, t0 + 1);
      await slots.acquire({ key, limit: 1, holder: 'stays', expiresAt: t0 + 2000, wait: { priority: 0, queuedAt: t0, expiresAt: t0 + 5000 } }, t0 + 1);
      assert.deepEqual(waitersOf(await inspect(slots, key, t0 + 99)), ['gone', 'stays']);
      assert.deepEqual(waitersOf(await inspect(slots, key, t0 + 100)), ['stays'], 'a waiter entry with expiresAt <= now has lapsed');
      assert.equal(await slots.release(key, 'a', t0 + 200), 'stays');
      assert.deepEqual(
        await slots.acquire({ key, limit: 1, holder: 'stays', expiresAt: t0 + 2000, wait: { priority: 0, queuedAt: t0, expiresAt: t0 + 5000 } }, t0 + 201),
        { acquired: true },
        'the lapsed waiter ahead does not block',
      );
      // The lapsed waiter asks again with a new entry, which replaces the old one.
      const refreshed = { priority: -2, queuedAt: t0 + 300, expiresAt: t0 + 6000 };
      assert.deepEqual(await slots.acquire({ key, limit: 1, holder: 'gone', expiresAt: t0 + 2000, wait: refreshed }, t0 + 300), {
        acquired: false,
        freeAt: t0 + 2000,
      });
      await slots.acquire({ key, limit: 1, holder: 'other', expiresAt: t0 + 2000, wait: { priority: 0, queuedAt: t0 + 301, expiresAt: t0 + 6000 } }, t0 + 301);
      assert.deepEqual((await inspect(slots, key, t0 + 302)).waiters, [
        { holder: 'other', priority: 0, queuedAt: t0 + 301, expiresAt: t0 + 6000 },
        { holder: 'gone', ...refreshed },
      ]);
      // A live entry is refreshed too: asking again with a higher priority moves it up the line.
      const raised = { priority: 3, queuedAt: t0 + 400, expiresAt: t0 + 7000 };
      await slots.acquire({ key, limit: 1, holder: 'gone', expiresAt: t0 + 2000, wait: raised }, t0 + 400);
      assert.deepEqual((await inspect(slots, key, t0 + 401)).waiters, [
        { holder: 'gone', ...raised },
        { holder: 'other', priority: 0, queuedAt: t0 + 301, expiresAt: t0 + 6000 },
      ]);
    }),

    conformanceCase('racing acquires for the last slots, from several store instances, grant exactly the free ones', async (env: CaseEnv) => {
      const { store, t0, harness } = env;
      // Separate instances (connections) where the backend has them; one instance otherwise.
      const peers = harness.capabilities?.multiProcess === false ? [store] : [store, await env.openPeer(), await env.openPeer(), await env.openPeer()];
      const key = 'c:race';
      const limit = 3;
      for (const round of [0, 1]) {
        const now = t0 + round * 1000;
        // One slot already held, so the race is for the last two.
        assert.deepEqual(await slotsOf(store).acquire({ key, limit, holder: `held${round}`, expiresAt: now + 500 }, now), { acquired: true });
        const holders = Array.from({ length: 12 }, (_, i) => `r${round}h${String(i).padStart(2, '0')}`);
        const grants = await Promise.all(
          holders.map((holder, i) => slotsOf(peers[i % peers.length]!).acquire({ key, limit, holder, expiresAt: now + 500 }, now + 1)),
        );
        const winners = holders.filter((_, i) => grants[i]!.acquired);
        assert.equal(winners.length, limit - 1, `round ${round}: exactly ${limit - 1} of 12 racers granted, got ${winners.join(', ')}`);
        assert.deepEqual(holdersOf(await inspect(slotsOf(peers[1 % peers.length]!), key, now + 2)), [`held${round}`, ...winners].sort());
        for (const [i, grant] of grants.entries()) if (!grant.acquired) assert.equal(grant.freeAt, now + 500, `${holders[i]} refused with freeAt`);
        // The next round starts after every slot of this one expired.
      }
    }),

    conformanceCase('generated sequences of acquire, renew, release and expiry match the contract step by step', async ({ store, t0 }) => {
      for (const seed of slotSeeds()) await runSlotSequence(slotsOf(store), `gen:${seed}`, seed, t0);
    }),

    conformanceCase(
      'a rate limit of N takes per period never has N+1 takes in any window of one period, and refuses no take it could grant',
      async ({ store, t0 }) => {
        const slots = slotsOf(store);
        const rng = new Rng(17);
        const key = 'r:window';
        const limit = 3;
        const period = 1000;
        const granted: number[] = [];
        let now = t0;
        for (let i = 0; i < 40; i += 1) {
          now += rng.int(0, 250);
          const inWindow = granted.filter((at) => at + period > now);
          const grant = await slots.acquire({ key, limit, holder: `take-${i}`, expiresAt: now + period }, now);
          if (inWindow.length < limit) assert.deepEqual(grant, { acquired: true }, `take ${i} at +${now - t0}: ${inWindow.length} takes in the window`);
          else assert.deepEqual(grant, { acquired: false, freeAt: Math.min(...inWindow) + period }, `take ${i} at +${now - t0}`);
          if (grant.acquired) granted.push(now);
        }
        for (const start of granted) {
          const within = granted.filter((at) => at >= start && at < start + period).length;
          assert.ok(within <= limit, `${within} takes in the window from +${start - t0}`);
        }
        assert.ok(granted.length > limit, 'the sequence reached past one window');
      },
    ),

    conformanceCase('hostile keys and holders round-trip exactly through inspect and release, and keys stay distinct', async ({ store, t0 }) => {
      const slots = slotsOf(store);
      const names = [...HOSTILE_NAMES, 'k'.repeat(512), '𝄞'.repeat(256)];
      for (const name of names) {
        assert.deepEqual(
          await slots.acquire({ key: name, limit: 1, holder: name, expiresAt: t0 + 1000 }, t0),
          { acquired: true },
          `key ${label(name)} is its own key`,
        );
      }
      for (const name of names) assert.deepEqual((await slots.inspect(name, t0)).holders, [{ holder: name, expiresAt: t0 + 1000 }], `key ${label(name)}`);
      const line = 'c:hostile-line';
      await slots.acquire({ key: line, limit: 1, holder: 'first', expiresAt: t0 + 1000 }, t0);
      for (const [i, name] of names.entries())
        await slots.acquire({ key: line, limit: 1, holder: name, expiresAt: t0 + 1000, wait: waitAt(t0, 0, t0 + i) }, t0);
      assert.deepEqual(waitersOf(await slots.inspect(line, t0)), names);
      // Each release names the next waiter exactly, which then takes the slot with its own name.
      let holding = 'first';
      for (const [i, name] of names.entries()) {
        assert.equal(await slots.release(line, holding, t0), name, `holder ${label(name)} comes back exactly`);
        assert.deepEqual(await slots.acquire({ key: line, limit: 1, holder: name, expiresAt: t0 + 1000, wait: waitAt(t0, 0, t0 + i) }, t0), { acquired: true });
        holding = name;
      }
      assert.deepEqual(await slots.inspect(line, t0), { holders: [{ holder: holding, expiresAt: t0 + 1000 }], waiters: [] });
    }),

    conformanceCase('bad arguments are refused with INVALID_INPUT and change nothing', async ({ store, t0 }) => {
      const slots = slotsOf(store);
      const key = 'c:k';
      await slots.acquire({ key, limit: 1, holder: 'a', expiresAt: t0 + 1000 }, t0);
      await slots.acquire({ key, limit: 1, holder: 'w', expiresAt: t0 + 1000, wait: waitAt(t0, 0, t0) }, t0);
      const before = await inspect(slots, key, t0 + 1);
      const good = { key, limit: 2, holder: 'b', expiresAt: t0 + 1000 };
      const badNames = [...NOT_STRINGS, ...MALFORMED_IDENTIFIERS, '', 'k'.repeat(513)];
      const badTimes = [Number.NaN, Number.POSITIVE_INFINITY, 1.5, '5', null, undefined];
      const calls: Array<[string, () => Promise<unknown>]> = [];
      for (const bad of badNames) {
        const s = bad as string;
        calls.push([`acquire key ${show(bad)}`, () => slots.acquire({ ...good, key: s }, t0 + 1)]);
        calls.push([`acquire holder ${show(bad)}`, () => slots.acquire({ ...good, holder: s }, t0 + 1)]);
        calls.push([`renew key ${show(bad)}`, () => slots.renew(s, 'a', t0 + 5000, t0 + 1)]);
        calls.push([`renew holder ${show(bad)}`, () => slots.renew(key, s, t0 + 5000, t0 + 1)]);
        calls.push([`release key ${show(bad)}`, () => slots.release(s, 'a', t0 + 1)]);
        calls.push([`release holder ${show(bad)}`, () => slots.release(key, s, t0 + 1)]);
        calls.push([`inspect key ${show(bad)}`, () => slots.inspect(s, t0 + 1)]);
      }
      for (const bad of [0, -1, 1.5, 10_001, Number.NaN, Number.POSITIVE_INFINITY, '2', null, undefined]) {
        calls.push([`acquire limit ${show(bad)}`, () => slots.acquire({ ...good, limit: bad as number }, t0 + 1)]);
      }
      for (const bad of badTimes) {
        const n = bad as number;
        calls.push([`acquire expiresAt ${show(bad)}`, () => slots.acquire({ ...good, expiresAt: n }, t0 + 1)]);
        calls.push([`acquire now ${show(bad)}`, () => slots.acquire(good, n)]);
        calls.push([`acquire wait.queuedAt ${show(bad)}`, () => slots.acquire({ ...good, wait: { ...waitAt(t0, 0, t0), queuedAt: n } }, t0 + 1)]);
        calls.push([`renew expiresAt ${show(bad)}`, () => slots.renew(key, 'a', n, t0 + 1)]);
        calls.push([`renew now ${show(bad)}`, () => slots.renew(key, 'a', t0 + 5000, n)]);
        calls.push([`release now ${show(bad)}`, () => slots.release(key, 'a', n)]);
        calls.push([`inspect now ${show(bad)}`, () => slots.inspect(key, n)]);
      }
      for (const bad of [1001, -1001, 0.5, Number.NaN, '1', null, undefined]) {
        calls.push([`acquire wait.priority ${show(bad)}`, () => slots.acquire({ ...good, wait: { ...waitAt(t0, 0, t0), priority: bad as number } }, t0 + 1)]);
      }
      for (const bad of [t0 + 1, t0, Number.NaN, 2.5]) {
        calls.push([
          `acquire wait.expiresAt ${show(bad)} (now is t0+1)`,
          () => slots.acquire({ ...good, wait: { ...waitAt(t0, 0, t0), expiresAt: bad } }, t0 + 1),
        ]);
      }
      for (const bad of [null, 'soon', [], 5]) {
        calls.push([`acquire wait ${show(bad)}`, () => slots.acquire({ ...good, wait: bad as unknown as SlotWait }, t0 + 1)]);
      }
      for (const bad of [null, undefined, 'c:k', []]) {
        calls.push([`acquire request ${show(bad)}`, () => slots.acquire(bad as never, t0 + 1)]);
      }
      for (const [what, call] of calls) await rejectsWithCode(call(), 'INVALID_INPUT', what);
      assert.deepEqual(await inspect(slots, key, t0 + 1), before, 'no refused call changed the key');
      // The bounds themselves are accepted.
      const edge = { key: 'k'.repeat(512), limit: 10_000, holder: 'h'.repeat(512), expiresAt: t0 + 1000 };
      assert.deepEqual(await slots.acquire({ ...edge, wait: { priority: 1000, queuedAt: t0, expiresAt: t0 + 2 } }, t0 + 1), { acquired: true });
      assert.deepEqual(
        await slots.acquire({ ...edge, key: `${'k'.repeat(511)}j`, limit: 1, wait: { priority: -1000, queuedAt: t0, expiresAt: t0 + 2 } }, t0 + 1),
        { acquired: true },
      );
    }),
  ].map((c) => ({ ...c, requires: [...c.requires, 'slots' as const] })),
);
