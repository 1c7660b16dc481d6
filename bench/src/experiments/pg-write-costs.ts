/**
 * `pnpm --filter @cairn/bench run experiment:pg-write-costs`
 *
 * What one inline step costs PostgreSQL itself, without the engine, Kysely or the store's client
 * code: the store's step routines called with plain `pg` as named (prepared) statements, next
 * to the floor (one autocommit INSERT per step): the two writes of a step recorded at its start,
 * one combined write per step (finish of step N and start of step N+1 in one transaction — a design
 * not implemented), and the one write per step the engine makes since decision 33 (the step
 * inserted finished), named and unnamed. Same durable server as `pnpm bench`. Prints medians of REPS repetitions of STEPS steps.
 */
import { withPostgresExperiment } from './experiment-postgres.js';
import { median, nowMs } from '../stats.js';

const STEPS = 200;
const REPS = 7;

// The argument lists of the routines as cairn_0008_step_finished creates them (the finished attempt 1
// after `p_now`, `p_async` last).
const INSERT = `select * from "cairn_step_insert"($1::text, $2::bigint, $3::text, $4::text, $5::text, $6::text, $7::integer,
  $8::text, $9::integer, $10::smallint, $11::text, $12::text, $13::bigint, $14::text, $15::bigint, $16::text, $17::bigint,
  $18::text, $19::bigint, $20::text, $21::text, $22::smallint)`;
const FINISH = `select * from "cairn_step_transition"($1::text, $2::bigint, $3::text, $4::text, $5::integer, $6::text,
  $7::integer, $8::smallint, $9::text, $10::smallint, $11::text, $12::smallint, $13::bigint, $14::text, $15::bigint, $16::bigint,
  $17::text, $18::smallint, $19::text, $20::smallint, $21::text, $22::smallint, $23::text)`;
// Both routines in one function call, hence one transaction and one durable commit.
const COMBINED_FN = `create function bench_finish_and_start(p_run text, p_prev text, p_next text, p_seq int, p_fence bigint, p_now bigint)
  returns void language plpgsql as $$
  begin
    perform * from cairn_step_transition(p_run, p_fence, p_prev, 'running'::text, 1, 'succeeded'::text, null::int,
      1::smallint, 'null'::text, 0::smallint, null::text, 0::smallint, null::bigint, null::text, null::bigint, p_now, 'succeeded'::text,
      0::smallint, null::text, 0::smallint, null::text, 0::smallint, null::text);
    perform * from cairn_step_insert(p_run, p_fence, p_next, p_next, 'n'::text, 'task'::text, p_seq, 'running'::text, 1,
      0::smallint, null::text, null::text, null::bigint, null::text, null::bigint, 'w'::text, p_now, null::text, null::bigint,
      null::text, null::text, 0::smallint);
  end $$`;

await withPostgresExperiment(async ({ server, store, client }) => {
  await client.query(COMBINED_FN);
  await client.query('create table bench_floor (k text primary key, v text)');
  const now = Date.now();
  let n = 0;
  const runWithLease = async () => {
    const id = `r${++n}`;
    await store.runs.create({ id, workflow: 'w', version: '1', input: null }, now);
    return { id, fence: (await store.runs.claim(id, 'w', 3_600_000, now))!.fence };
  };
  const start = (run: { id: string; fence: number }, key: string, seq: number, async: 0 | 1) =>
    client.query({
      name: 'start',
      text: INSERT,
      values: [run.id, run.fence, key, key, 'n', 'task', seq, 'running', 1, 0, null, null, null, null, null, 'w', now, null, null, null, null, async],
    });
  // What the engine writes per inline step since decision 33: the step, finished, with its attempt 1.
  const finished = (run: { id: string; fence: number }, key: string, seq: number, turn: number, named: boolean) => {
    const values = [run.id, run.fence, key, key, 'n', 'task', seq, 'succeeded', 1, 0, null, null, null, null, turn, 'w', now, 'succeeded', now, null, null, 0];
    return named ? client.query({ name: 'finished', text: INSERT, values }) : client.query(INSERT, values);
  };
  const finish = (run: { id: string; fence: number }, key: string) =>
    client.query({
      name: 'finish',
      text: FINISH,
      values: [run.id, run.fence, key, 'running', 1, 'succeeded', null, 1, 'null', 0, null, 0, null, null, null, now, 'succeeded', 0, null, 0, null, 0, null],
    });
  const samples: Record<string, number[]> = {};
  const timed = async (name: string, fn: () => Promise<void>) => {
    const t0 = nowMs();
    await fn();
    (samples[name] ??= []).push(((nowMs() - t0) * 1000) / STEPS);
  };
  for (let rep = 0; rep < REPS; rep++) {
    const a = await runWithLease();
    const keys = Array.from({ length: STEPS }, (_, i) => `k${rep}-${i}`);
    await timed('start write (synchronous_commit = off)', async () => {
      for (const [i, key] of keys.entries()) await start(a, key, i, 1);
    });
    await timed('finish write (durable)', async () => {
      for (const key of keys) await finish(a, key);
    });
    const b = await runWithLease();
    await timed('both writes, step by step', async () => {
      for (const [i, key] of keys.entries()) {
        await start(b, key, i, 1);
        await finish(b, key);
      }
    });
    const c = await runWithLease();
    let previous = `p${rep}`;
    await start(c, previous, 0, 0);
    await timed('one combined write per step', async () => {
      for (const [i, key] of keys.entries()) {
        await client.query({
          name: 'combined',
          text: 'select bench_finish_and_start($1, $2, $3, $4, $5, $6)',
          values: [c.id, previous, key, i + 1, c.fence, now],
        });
        previous = key;
      }
    });
    const d = await runWithLease();
    await timed('one write per step: finished step insert (named statement)', async () => {
      for (const [i, key] of keys.entries()) await finished(d, key, i, i + 1, true);
    });
    const e = await runWithLease();
    await timed('one write per step: finished step insert (unnamed, as Kysely sends it)', async () => {
      for (const [i, key] of keys.entries()) await finished(e, key, i, i + 1, false);
    });
    await timed('floor: one autocommit INSERT', async () => {
      for (const key of keys) await client.query({ name: 'floor', text: 'insert into bench_floor values ($1, $2)', values: [key, 'null'] });
    });
  }
  const floor = median(samples['floor: one autocommit INSERT']!);
  process.stdout.write(`PostgreSQL ${server.version} (${server.settings}); ${REPS} × ${STEPS} steps, plain pg, named statements\n\n`);
  process.stdout.write('| write | µs per step (median) | × floor |\n| --- | --- | --- |\n');
  for (const [name, values] of Object.entries(samples)) {
    const m = median(values);
    process.stdout.write(`| ${name} | ${m.toFixed(0)} | ${(m / floor).toFixed(2)} |\n`);
  }
});
