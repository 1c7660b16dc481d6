// semver, the copy the changesets CLI uses (the root package has no direct dependency on it).
import { createRequire } from 'node:module';

interface Semver {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
  validRange(range: string): string | null;
  valid(version: string): string | null;
  major(version: string): number;
  inc(version: string, release: 'major' | 'minor' | 'patch'): string | null;
}

const require = createRequire(import.meta.url);
export const semver = createRequire(require.resolve('@changesets/cli/package.json'))('semver') as Semver;
