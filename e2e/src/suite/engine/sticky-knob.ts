import type { EngineOptions } from '@cairn/core';

/** What `CAIRN_STICKY` may say: the conformance engines keep suspended executions (`on`), never (`off`), or drop them at random (`evict`). */
export type StickyMode = 'on' | 'off' | 'evict';

/** `CAIRN_STICKY` (default `on`, the engine's default); anything else is refused, so a typo cannot test the wrong thing. */
export function stickyMode(value = process.env['CAIRN_STICKY'], what = 'CAIRN_STICKY'): StickyMode {
  const mode = value === undefined || value === '' ? 'on' : value;
  if (mode !== 'on' && mode !== 'off' && mode !== 'evict') throw new Error(`${what} must be on, off or evict, got ${JSON.stringify(value)}`);
  return mode;
}

/**
 * The `stickyExecutions` option of every engine the conformance suite starts (engine worlds):
 * kept executions on (the default), off (`false`: every wake replays), or on with evictions forced
 * at random, half of the keeps and resumes, from a seeded generator (`CAIRN_STICKY_SEED`, default
 * 1), so the fallback to a full replay is exercised at arbitrary points of every run.
 */
export function stickyOption(mode: StickyMode = stickyMode()): Pick<EngineOptions, 'stickyExecutions'> {
  if (mode === 'on') return {};
  if (mode === 'off') return { stickyExecutions: false };
  let state = Number(process.env['CAIRN_STICKY_SEED'] ?? 1) >>> 0 || 1;
  // xorshift32: reproducible for a seed, no dependency.
  const next = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  return { stickyExecutions: { evict: () => next() < 0.5 } };
}
