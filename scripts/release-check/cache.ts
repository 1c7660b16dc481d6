// Where the release check keeps what outlives a run: the npm cache (tarballs and metadata of the
// consumer projects' dependencies) and better-sqlite3 binaries built for each Node ABI.
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `$CAIRN_RELEASE_CHECK_CACHE`, else `$CAIRN_CI_CACHE/release-check` (default /var/cache/cairn), else ~/.cache. */
export function cacheRoot(): string {
  const explicit = process.env['CAIRN_RELEASE_CHECK_CACHE'];
  if (explicit) return explicit;
  const ci = process.env['CAIRN_CI_CACHE'] ?? '/var/cache/cairn';
  try {
    if (!existsSync(ci)) mkdirSync(ci, { recursive: true });
    accessSync(ci, constants.W_OK);
    return join(ci, 'release-check');
  } catch {
    return join(homedir(), '.cache', 'cairn-release-check');
  }
}

export const npmCacheDir = () => join(cacheRoot(), 'npm');
export const prebuildsDir = () => join(cacheRoot(), 'prebuilds');
