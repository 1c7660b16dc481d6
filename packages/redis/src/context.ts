import { CairnError } from '@cairn/core';
import { leaseLost, runConflict, runNotFound } from '@cairn/core/backend';
import type { RedisCaller } from './client.js';
import type { Hash } from './codec.js';
import type { KeySpace } from './keys.js';
import type { Scripts } from './scripts/index.js';
import type { IndexMode, LuaScript } from './scripts/script.js';

/** What every part of the store shares. */
export interface StoreContext {
  readonly caller: RedisCaller;
  readonly keys: KeySpace;
  readonly mode: IndexMode;
  readonly scripts: Scripts;
  /** Called with an index write that failed after its run write succeeded (split mode). */
  readonly onIndexError: (err: unknown) => void;
}

/** A run script's answer: a code, a payload, and (split mode) the facts the indexes must record. */
export interface ScriptReply {
  code: string;
  payload: unknown[];
  facts: string[];
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** Runs a run script and returns its raw reply (no index work). */
export async function callRunScript(ctx: StoreContext, script: LuaScript, runId: string, args: readonly (string | number)[]): Promise<ScriptReply> {
  const keys = ctx.mode === 'combined' ? [ctx.keys.run(runId), ctx.keys.runs] : [ctx.keys.run(runId)];
  const reply = asArray(await ctx.caller.script(script, keys, args));
  return { code: String(reply[0]), payload: asArray(reply[1]), facts: asArray(reply[2]).map(String) };
}

/**
 * Runs a write over one run. In split mode, a `dueHint` (a time the run may now be due at) is sent
 * alongside, and the facts the script returns are recorded in the global indexes afterwards; an
 * index failure there is reported, not thrown: the run write has happened, and readers repair
 * stale index entries when they meet them.
 */
export async function runWrite(
  ctx: StoreContext,
  script: LuaScript,
  runId: string,
  args: readonly (string | number)[],
  dueHint?: number,
): Promise<ScriptReply> {
  let hint: Promise<unknown> | undefined;
  if (ctx.mode === 'split' && dueHint !== undefined) {
    hint = ctx.caller.script(ctx.scripts.dueHint, [ctx.keys.runs], [runId, String(dueHint)]).catch(ctx.onIndexError);
  }
  const write = callRunScript(ctx, script, runId, args);
  if (hint) await Promise.all([write.catch(() => undefined), hint]);
  const reply = await write;
  const { facts } = reply;
  if (ctx.mode !== 'split') return reply;
  if (facts.length >= 7 && facts[6] === '1') {
    // The run's status or due time changed: record it before answering.
    await syncIndex(ctx, facts.slice(0, 6));
  } else if (hint !== undefined) {
    // Nothing indexed changed (or the write was refused): undo the hint in the background, so a
    // refused write costs one round trip. Safe to let run late: the revision check orders it.
    void (facts.length >= 7 ? syncIndex(ctx, facts.slice(0, 6)) : ctx.caller.script(ctx.scripts.dropHint, [ctx.keys.runs], [runId]).catch(ctx.onIndexError));
  }
  return reply;
}

/** Records a run's facts in the global indexes (ignored when a newer revision is there already). */
export async function syncIndex(ctx: StoreContext, facts: readonly string[]): Promise<void> {
  await ctx.caller.script(ctx.scripts.syncIndex, [ctx.keys.runs], facts).catch(ctx.onIndexError);
}

/** The facts of a run as read from its hash (mirrors `facts()` in the Lua prelude). */
export function factsOf(hash: Hash): string[] {
  const status = hash.status ?? '';
  let due = '';
  // A paused run is out of the due index (as the scripts' dueOf says).
  if (hash.paused !== undefined) due = '';
  else if (status === 'pending' || status === 'waiting') due = hash.wakeAt ?? '';
  else if (status === 'running') due = hash.leaseExp ?? '';
  return [hash.id ?? '', hash.rev ?? '0', status, hash.workflow ?? '', hash.createdAt ?? '0', due];
}

/**
 * Brings the indexes in line with what a reader found: re-records the run's facts, or removes a
 * run that no longer exists. Best effort; failures are reported.
 */
export async function repairIndex(ctx: StoreContext, runId: string, hash: Hash | undefined): Promise<void> {
  if (hash === undefined) {
    await ctx.caller.script(ctx.scripts.forgetRun, [ctx.keys.runs], [runId, '', '']).catch(ctx.onIndexError);
  } else {
    await syncIndex(ctx, factsOf(hash));
  }
}

/** The typed error for a failed write check reported by a script. */
export function writeError(runId: string, code: string, data: unknown[], fence?: number | null): CairnError {
  switch (code) {
    case 'RUN_NOT_FOUND':
      return runNotFound(runId);
    case 'LEASE_LOST':
      return leaseLost(runId, fence ?? null, data[0] === undefined || data[0] === '' ? null : Number(data[0]));
    case 'RUN_TERMINAL':
      return runConflict(runId, String(data[0]));
    default:
      return new CairnError('STORE_ERROR', `Redis store: unexpected script answer ${code} for run ${runId}`, {
        data: { runId, code },
      });
  }
}
