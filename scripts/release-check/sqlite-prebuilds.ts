// better-sqlite3 installs through prebuild-install, which downloads a prebuilt binary for the
// Node ABI and otherwise compiles from source (~2 min on 2 cores). Here there is no download, so
// we keep the binaries we compiled as *local prebuilds* (prebuild-install's `--local-prebuilds`
// directory, set through a .prebuild-installrc in the consumer project): the package's own
// install script then unpacks one exactly as it would a downloaded prebuild, and compiles only
// for a (version, ABI) not seen before. .ci/run's cache of the workspace build is used as a seed.
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { execOk } from './exec.js';
import { prebuildsDir } from './cache.js';
import type { NodeInstall } from './node-versions.js';

const MACHINE: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64' };

/** The file name prebuild-install looks for (`{name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz`). */
export const prebuildName = (version: string, abi: string) => `better-sqlite3-v${version}-node-v${abi}-${platform()}-${arch()}.tar.gz`;

async function packBinary(binary: string, target: string): Promise<void> {
  const stage = mkdtempSync(`${target}.stage-`);
  try {
    mkdirSync(join(stage, 'build', 'Release'), { recursive: true });
    copyFileSync(binary, join(stage, 'build', 'Release', 'better_sqlite3.node'));
    const tmp = `${target}.${process.pid}.tmp`;
    await execOk('packing the better-sqlite3 binary', 'tar', ['-czf', tmp, '-C', stage, 'build/Release/better_sqlite3.node']);
    renameSync(tmp, target);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * Points the consumer project at the local prebuilds and makes sure one exists for this Node when
 * any cache has the binary. Returns whether the install will find a prebuilt binary.
 */
export async function preparePrebuild(projectDir: string, version: string, node: NodeInstall): Promise<boolean> {
  const dir = prebuildsDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(projectDir, '.prebuild-installrc'), `local-prebuilds=${dir}\n`);
  const target = join(dir, prebuildName(version, node.abi));
  if (existsSync(target)) return true;
  const ciCache = process.env['CAIRN_CI_CACHE'] ?? '/var/cache/cairn';
  const seeded = join(ciCache, 'better-sqlite3', `${version}-abi${node.abi}-${MACHINE[arch()] ?? arch()}`, 'better_sqlite3.node');
  if (existsSync(seeded)) {
    await packBinary(seeded, target);
    return true;
  }
  return false;
}

/** After an install that compiled better-sqlite3, keeps its binary for the next run. */
export async function rememberPrebuild(projectDir: string, version: string, node: NodeInstall): Promise<void> {
  const target = join(prebuildsDir(), prebuildName(version, node.abi));
  const binary = join(projectDir, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(target) && existsSync(binary)) await packBinary(binary, target);
}
