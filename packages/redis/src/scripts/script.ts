import { createHash } from 'node:crypto';
import { COMBINED_TAIL, RUN_PRELUDE, SPLIT_TAIL } from './lua-lib.lua.js';

/** A Lua script with its SHA1, as `EVALSHA` addresses it. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

/** Makes a script from its source (computing the SHA1 `EVALSHA` needs). */
export function luaScript(name: string, source: string): LuaScript {
  return { name, source, sha: createHash('sha1').update(source, 'utf8').digest('hex') };
}

/** How run scripts reach the global indexes: split (two scripts, cluster-safe) or combined (one). */
export type IndexMode = 'split' | 'combined';

/** A script over one run's keys, completed for the index mode. */
export function runScript(name: string, body: string, mode: IndexMode): LuaScript {
  return luaScript(`${name}:${mode}`, `${RUN_PRELUDE}\n${mode === 'split' ? SPLIT_TAIL : COMBINED_TAIL}\n${body}`);
}
