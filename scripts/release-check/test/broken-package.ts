// Makes a deliberately broken copy of a good tarball: unpack, change, `npm pack` again.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execOk } from '../exec.js';
import { unpack } from '../pack.js';
import type { PackageJson } from '../workspace.js';

/** Returns the path of a new tarball (under `parent`): `tarball` with `change` applied to its package.json (and files). */
export async function breakTarball(parent: string, tarball: string, change: (json: PackageJson, dir: string) => void): Promise<string> {
  const work = mkdtempSync(join(parent, 'broken-'));
  await unpack(tarball, work);
  const dir = join(work, 'package');
  const manifest = join(dir, 'package.json');
  const json = JSON.parse(readFileSync(manifest, 'utf8')) as PackageJson;
  change(json, dir);
  writeFileSync(manifest, JSON.stringify(json, null, 2));
  const out = join(work, 'out');
  mkdirSync(out);
  const result = await execOk('npm pack of the broken copy', 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], { cwd: dir });
  const [info] = JSON.parse(result.output.slice(result.output.indexOf('['))) as { filename: string }[];
  return join(out, (info as { filename: string }).filename);
}
