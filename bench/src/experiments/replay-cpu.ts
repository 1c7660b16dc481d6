// Replay CPU per recorded step (issue 30 part 3), memory store: a run of N no-op steps that then
// sleeps, woken again and again by an event (each wake replays all N steps: kept executions off).
// `N=2000 REPS=120 node --import tsx --conditions=@cairn/source src/experiments/replay-cpu.ts` prints
// the median CPU of the bench process per wake divided by N (and the window's wall time per step).
import { memoryBackend } from '../backends/memory.js';
import { benchEngine, replayWorkflow } from '../scenarios/workflows.js';
const N = Number(process.env.N ?? 2000);
const REPS = Number(process.env.REPS ?? 200);
const inst = await memoryBackend.setup({} as never);
const opened = await inst.openStore();
const { probe } = opened;
const engine = benchEngine(probe.store, { concurrency: 1, stickyExecutions: false });
await engine.start();
const r0 = performance.now();
const handle = await engine.startRun(replayWorkflow, N, { mode: 'inline' });
await probe.execution(handle.id, r0);
const walls: number[] = [];
const cpus: number[] = [];
for (let i = 0; i < REPS; i++) {
  const since = performance.now();
  const c0 = process.cpuUsage();
  await engine.sendEvent(handle.id, `p${i}`);
  const w = await probe.execution(handle.id, since);
  const c = process.cpuUsage(c0);
  if (i >= REPS / 4) {
    walls.push(w.endedAt - w.startedAt);
    cpus.push(c.user + c.system);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(JSON.stringify({ N, wallUsPerStep: (med(walls) * 1000) / N, cpuUsPerStep: med(cpus) / N }));
await engine.stop();
