import type { RunTimeline } from '@cairn/core';
import type { TimelineAttempt, TimelineStep } from '@cairn/core/backend';
import { type Colors, colors as makeColors } from './colors.js';
import { asDivergence, divergenceParts } from './divergence.js';
import { cell, clip, formatDuration, formatTags, formatTime, inlineJson, wrap } from './format.js';
import { safeText } from './safe-text.js';

/** Options of `renderTimeline`. */
export interface TimelineViewOptions {
  /** Colour functions (default: none). */
  colors?: Colors;
  /** The terminal width to fit (default 80, at least 60). */
  width?: number;
  /** The current time, for how long an active run has been going (default `Date.now()`). */
  now?: number;
  /** The current directory: a divergence's code location under it is printed relative to it (as `cairn check` does). */
  cwd?: string;
}

// Column widths; with the bar they fit 80 columns.
const NAME = 20;
const ATTEMPT = 2;
const OUTCOME = 10;
const TOOK = 9;
const KIND = 10;

const STATUS_COLOR: Record<string, keyof Colors> = {
  completed: 'green',
  succeeded: 'green',
  failed: 'red',
  abandoned: 'yellow',
  cancelled: 'yellow',
  running: 'cyan',
  waiting: 'blue',
  retry_wait: 'magenta',
  scheduled: 'gray',
  pending: 'gray',
};

function paint(c: Colors, status: string, text: string): string {
  const fn = c[STATUS_COLOR[status] ?? 'reset'] as (s: string) => string;
  return fn(text);
}

/** A bar of `width` cells: `█` over [start, end] of the span [from, to], `░` for a wait, `▏` for an instant. */
function bar(from: number, to: number, start: number, end: number, width: number, fill: string): string {
  const span = Math.max(1, to - from);
  const a = Math.min(width - 1, Math.max(0, Math.floor(((start - from) / span) * width)));
  const b = Math.min(width, Math.max(a + 1, Math.ceil(((end - from) / span) * width)));
  if (end - start <= 0) return `${' '.repeat(a)}▏${' '.repeat(width - a - 1)}`;
  return ' '.repeat(a) + fill.repeat(b - a) + ' '.repeat(width - b);
}

function waitNote(step: TimelineStep): string | undefined {
  const wait = step.wait;
  if (!wait) return undefined;
  switch (wait.kind) {
    case 'sleep':
      return `sleeps until ${formatTime(wait.until)}`;
    case 'event': {
      const name = safeText(wait.event);
      if (wait.received !== undefined) return `event "${name}" received ${inlineJson(wait.received)}`;
      if (wait.timedOut) return `event "${name}" timed out`;
      return `waits for event "${name}"${wait.timeoutAt === undefined ? '' : ` until ${formatTime(wait.timeoutAt)}`}`;
    }
    case 'child':
      return `child run ${safeText(wait.childRunId)}`;
    case 'retry':
      return `next attempt at ${formatTime(wait.at)}`;
    case 'select':
      return wait.winner === undefined
        ? `first of several${wait.timeoutAt === undefined ? '' : `, timer at ${formatTime(wait.timeoutAt)}`}`
        : `won by "${safeText(wait.winner)}" (${safeText(wait.winnerKind ?? '?')}${wait.event === undefined ? '' : ` "${safeText(wait.event)}" #${wait.seq ?? '?'}`})`;
  }
}

/**
 * A run's timeline as text for a terminal: a header (status, times, parent, deadline, error,
 * state), then a table of steps — one row per attempt of a task, one per wait or recorded value —
 * with outcome, duration and a bar chart of when it ran over the run's span. Every piece of run
 * data is shown escaped (no control character reaches the terminal); long values are cut to the
 * width (the full values are in `--json`).
 */
export function renderTimeline(timeline: RunTimeline, options: TimelineViewOptions = {}): string {
  const c = options.colors ?? makeColors(false);
  const width = Math.max(60, options.width ?? 80);
  const { run } = timeline;
  const lines: string[] = [];
  const field = (label: string, value: string) => lines.push(`${c.dim(label.padEnd(10))} ${value}`);
  const took =
    run.durationMs === undefined ? `since ${formatDuration((options.now ?? Date.now()) - run.createdAt)}` : `after ${formatDuration(run.durationMs)}`;

  lines.push(`${c.bold(clip(run.workflow, width - 40))} ${run.id}`);
  field('status', `${paint(c, run.status, run.status.toUpperCase())} ${took}`);
  field('version', clip(run.version, width - 12));
  field('created', formatTime(run.createdAt));
  if (run.endedAt !== undefined) field('ended', formatTime(run.endedAt));
  if (run.idempotencyKey !== undefined) field('key', clip(run.idempotencyKey, width - 12));
  if (run.tags !== undefined) field('tags', clip(formatTags(run.tags), width - 12));
  if (run.parent) field('parent', `${safeText(run.parent.runId)} (step ${clip(run.parent.stepKey, width - 60)})`);
  if (run.deadline !== undefined) field('deadline', formatTime(run.deadline));
  if (run.wakeAt !== undefined && run.endedAt === undefined) field('wakes', formatTime(run.wakeAt));
  if (run.leaseOwner !== undefined) field('worker', clip(run.leaseOwner, width - 12));
  if (run.cancelRequested) field('cancel', run.cancelReason === undefined ? 'requested' : `requested: ${clip(run.cancelReason, width - 23)}`);
  if (run.continuedAs !== undefined) field('continued', `as run ${safeText(run.continuedAs)}`);
  if (run.forkedFrom) field('forked', `from ${safeText(run.forkedFrom.runId)} at step ${clip(run.forkedFrom.stepKey, width - 60)}`);
  for (const retry of run.retries ?? []) {
    field('retried', `${formatTime(retry.at)} from ${retry.previousStatus}, ${retry.forgottenSteps.length} step(s) again`);
    if (retry.reason !== undefined) field('  reason', clip(retry.reason, width - 12));
  }
  const divergence = run.error?.code === 'NON_DETERMINISM' ? asDivergence(run.error.data) : undefined;
  if (run.error && divergence) {
    // A replay that left the run's history: where, what each side has, the line, and what to do.
    const parts = divergenceParts(divergence, options.cwd);
    field('error', c.red(`NON_DETERMINISM: the code and the run's history part at ${parts.at} (turn ${divergence.turn})`));
    field('  history', clip(parts.history, width - 12));
    field('  code', clip(parts.code, width - 12));
    if (parts.location !== undefined) field('  line', clip(parts.location, width - 12));
    if (parts.note !== undefined) field('  note', clip(parts.note, width - 12));
    for (const [i, line] of wrap(run.error.message.replace(/^Run \S+: /, ''), width - 12).entries()) field(i === 0 ? '  why' : '', line);
  } else if (run.error) field('error', c.red(clip(`${run.error.code ? `${run.error.code}: ` : ''}${run.error.message}`, width - 12)));
  else if (run.output !== undefined) field('output', clip(inlineJson(run.output), width - 12));
  for (const [key, value] of Object.entries(timeline.state)) field('state', clip(`${safeText(key)} = ${inlineJson(value)}`, width - 12));
  for (const child of timeline.children) field(child.relation, `${safeText(child.runId)} (step ${clip(child.stepKey, width - 60)})`);

  const barWidth = Math.max(8, width - (NAME + ATTEMPT + OUTCOME + TOOK + KIND + 6));
  const { from, to } = timeline.span;
  const scale = `0${' '.repeat(Math.max(1, barWidth - 1 - formatDuration(to - from).length))}${formatDuration(to - from)}`;
  lines.push('');
  lines.push(c.dim(`${'step'.padEnd(NAME)} ${'#'.padStart(ATTEMPT)} ${'outcome'.padEnd(OUTCOME)} ${'took'.padEnd(TOOK)} ${'kind'.padEnd(KIND)} ${scale}`));
  if (timeline.steps.length === 0) lines.push(c.dim('(no steps recorded)'));
  const noteWidth = width - 4;
  for (const step of timeline.steps) {
    const label = step.kind === 'compensation' ? 'compensate' : step.kind;
    const kind = step.queued ? `${label}/q` : label;
    if (step.attempts.length > 0) {
      step.attempts.forEach((attempt: TimelineAttempt, i) => {
        const end = attempt.endedAt ?? to;
        const tookText = attempt.status === 'abandoned' ? '—' : attempt.durationMs === undefined ? '…' : formatDuration(attempt.durationMs);
        const name = i === 0 ? cell(step.name, NAME) : cell('', NAME);
        lines.push(
          `${name} ${String(attempt.attempt).padStart(ATTEMPT)} ${paint(c, attempt.status, cell(attempt.status, OUTCOME))} ${cell(tookText, TOOK)} ${cell(i === 0 ? kind : '', KIND)} ${paint(c, attempt.status, bar(from, to, attempt.startedAt, end, barWidth, '█'))}`,
        );
        const notes: string[] = [];
        if (attempt.worker !== undefined) notes.push(`on ${safeText(attempt.worker)}`);
        if (attempt.status === 'abandoned') notes.push('worker died or lost its lease mid-step');
        if (attempt.error) notes.push(`${attempt.error.code ? `${attempt.error.code}: ` : ''}${attempt.error.message}`);
        if (notes.length > 0) lines.push(c.dim(`  └ ${clip(notes.join(' · '), noteWidth)}`));
      });
      const note = waitNote(step);
      if (note) lines.push(c.dim(`  └ ${clip(note, noteWidth)}`));
    } else {
      const end = step.endedAt ?? to;
      const tookText = step.durationMs === undefined ? '…' : formatDuration(step.durationMs);
      const fill = step.kind === 'task' || step.kind === 'compensation' ? '█' : '░';
      lines.push(
        `${cell(step.name, NAME)} ${'—'.padStart(ATTEMPT)} ${paint(c, step.status, cell(step.status, OUTCOME))} ${cell(tookText, TOOK)} ${cell(kind, KIND)} ${paint(c, step.status, bar(from, to, step.startedAt, end, barWidth, fill))}`,
      );
      const notes = [waitNote(step), step.error ? `${step.error.code ? `${step.error.code}: ` : ''}${step.error.message}` : undefined].filter(
        (n): n is string => n !== undefined,
      );
      for (const note of notes) lines.push(c.dim(`  └ ${clip(note, noteWidth)}`));
    }
  }
  return lines.map((line) => line.trimEnd()).join('\n');
}
