import type { Divergence, DivergenceCall } from '@cairn/core/backend';
import { safeText } from './safe-text.js';

/** The `data` of a NON_DETERMINISM error (or a check's verdict) when it is a divergence report, else `undefined`. */
export function asDivergence(data: unknown): Divergence | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const d = data as Partial<Divergence>;
  return typeof d.reason === 'string' && typeof d.turn === 'number' && d.recorded !== undefined && d.called !== undefined ? (d as Divergence) : undefined;
}

/** A divergence in short readable pieces (each safe to print): where, what the history has, what the code did, and its line. */
export interface DivergenceParts {
  /** `#3`, the call position, or `—` when it has none. */
  at: string;
  /** What the history holds there: `task "create account"`, or `nothing`. */
  history: string;
  /** What the code called there instead, or what it did: `task "normalise email"`, `nothing (it ended first)`. */
  code: string;
  /** `file:line:column` of the code's call, shortened to be relative to `cwd` when under it. */
  location?: string;
  /** A note that changes the reading (a history recorded before delivery turns). */
  note?: string;
}

const call = (c: DivergenceCall) => `${safeText(c.kind)} "${safeText(c.key)}"`;

/** Splits `d` into the pieces `cairn check` and `cairn show` print. */
export function divergenceParts(d: Divergence, cwd?: string): DivergenceParts {
  let history = d.recorded === null ? 'nothing' : call(d.recorded);
  if (d.reason === 'late-call') history += ` (delivered before turn ${d.turn})`;
  let code: string;
  if (d.called !== null) code = d.reason === 'different-child' ? `ctx.startChild ${call(d.called)} (the history has an awaited ctx.child)` : call(d.called);
  else if (d.reason === 'ended-early') code = 'nothing (it ended first)';
  else if (d.reason === 'missing-call') code = `nothing (quiet in turn ${d.turn})`;
  else if (d.reason === 'untracked-await') code = 'a primitive after awaiting something else, branches in flight';
  else code = 'nothing';
  let location = d.location === undefined ? undefined : safeText(d.location);
  if (location !== undefined && cwd !== undefined && location.startsWith(`${cwd}/`)) location = location.slice(cwd.length + 1);
  return {
    at: d.seq === null ? '—' : `#${d.seq}`,
    history,
    code,
    ...(location === undefined ? {} : { location }),
    ...(d.historyBeforeTurns ? { note: 'recorded by a Cairn build before delivery turns (before 0.2.0)' } : {}),
  };
}
