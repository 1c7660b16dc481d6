import type { Engine, HistoryEntry, RunRecord, StepRecord } from '@cairn/core';

const ms = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`);
const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));

/** A run's timeline as text a person reads at a glance: one line per attempt or wait. */
export async function formatTimeline(engine: Engine, run: RunRecord): Promise<string> {
  const [steps, history] = await Promise.all([engine.steps(run.id), engine.history(run.id)]);
  const attemptsByKey = new Map<string, HistoryEntry[]>();
  for (const entry of history) attemptsByKey.set(entry.stepKey, [...(attemptsByKey.get(entry.stepKey) ?? []), entry]);
  const lines = [
    `${run.workflow} ${run.id}  →  ${run.status.toUpperCase()} after ${ms(run.updatedAt - run.createdAt)}`,
    `  ${pad('step', 26)}${pad('attempt', 9)}${pad('status', 11)}${pad('took', 10)}${pad('worker', 10)}note`,
  ];
  for (const step of steps) {
    const attempts = attemptsByKey.get(step.key);
    if (attempts) {
      for (const a of attempts) {
        const took = a.status === 'abandoned' ? '—' : a.endedAt === undefined ? '…' : ms(a.endedAt - a.startedAt);
        const note = a.status === 'abandoned' ? 'worker died mid-step' : (a.error?.message ?? '');
        lines.push(`  ${pad(step.name, 26)}${pad(String(a.attempt), 9)}${pad(a.status, 11)}${pad(took, 10)}${pad(a.worker ?? '', 10)}${note}`);
      }
    } else {
      lines.push(`  ${pad(step.name, 26)}${pad(step.kind, 9)}${pad(step.status, 11)}${pad(ms(step.updatedAt - step.createdAt), 10)}${pad('', 10)}${describe(step)}`);
    }
  }
  if (run.error) lines.push(`  error: ${run.error.message}`);
  return lines.join('\n');
}

function describe(step: StepRecord): string {
  if (step.kind === 'event') return `payload ${JSON.stringify(step.output)}`;
  if (step.kind === 'child') return `child run ${step.childRunId}`;
  return '';
}
