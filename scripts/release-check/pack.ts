// `pnpm pack` of every public package, exactly as `changeset publish` (pnpm publish) would pack it,
// and the tarballs unpacked for inspection.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execOk } from './exec.js';
import { ROOT, type WorkspacePackage } from './workspace.js';

export interface Packed {
  pkg: WorkspacePackage;
  /** The .tgz file. */
  tarball: string;
  /** Where it was unpacked: the tarball's `package/` directory. */
  dir: string;
  files: string[];
}

const safe = (name: string) => name.replace(/^@/, '').replace(/\//g, '-');

/** Packs one package directory into `dest` and unpacks it next to the tarball. */
export async function packDir(packageDir: string, name: string, dest: string): Promise<{ tarball: string; dir: string; files: string[] }> {
  mkdirSync(dest, { recursive: true });
  const result = await execOk(`pnpm pack of ${name}`, 'pnpm', ['pack', '--pack-destination', dest, '--json'], { cwd: packageDir });
  const info = JSON.parse(result.output.slice(result.output.indexOf('{'))) as { filename: string; files: { path: string }[] };
  const unpackDir = join(dest, 'unpacked', safe(name));
  await unpack(info.filename, unpackDir);
  return { tarball: info.filename, dir: join(unpackDir, 'package'), files: info.files.map((f) => f.path).sort() };
}

/** Extracts a .tgz into `into` (npm tarballs hold one `package/` directory). */
export async function unpack(tarball: string, into: string): Promise<void> {
  mkdirSync(into, { recursive: true });
  await execOk(`unpacking ${tarball}`, 'tar', ['-xzf', tarball, '-C', into]);
}

/** Packs every given package (in parallel; pnpm pack only reads files). */
export async function packAll(packages: readonly WorkspacePackage[], dest: string): Promise<Packed[]> {
  return Promise.all(
    packages.map(async (pkg) => {
      const { tarball, dir, files } = await packDir(join(ROOT, pkg.dir), pkg.name, dest);
      return { pkg, tarball, dir, files };
    }),
  );
}
