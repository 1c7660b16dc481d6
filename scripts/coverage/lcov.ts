import { resolve } from 'node:path';

// Reading and merging lcov files (what `node --test --experimental-test-coverage` writes with
// `--test-reporter=lcov`), and totals per area of the repository.

/** What one lcov file says about one source file: hits per line, per branch and per function. */
export interface FileCoverage {
  /** Hits per line number. */
  lines: Map<number, number>;
  /** Hits per branch, keyed `line,block,branch`. */
  branches: Map<string, number>;
  /** Hits per function, keyed `line,name`. */
  functions: Map<string, number>;
}

/** Covered and total counts of one kind. */
export interface Count {
  covered: number;
  total: number;
}

/** Lines, branches and functions of a set of files. */
export interface Totals {
  files: number;
  lines: Count;
  branches: Count;
  functions: Count;
}

const add = (map: Map<string | number, number>, key: string | number, hits: number) => map.set(key, (map.get(key) ?? 0) + hits);

/**
 * Parses lcov text and merges it into `into` (keyed by absolute source path): hits on the same
 * line, branch or function of the same file add up, so several runs over one file (the unit tests
 * and the conformance suite) count as one. Relative source paths (Node writes them relative to the
 * run's working directory) are resolved against `cwd`.
 */
export function mergeLcov(text: string, into: Map<string, FileCoverage> = new Map(), cwd = '/'): Map<string, FileCoverage> {
  let file: FileCoverage | undefined;
  const fnLines = new Map<string, number>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const colon = line.indexOf(':');
    const tag = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1);
    if (tag === 'SF') {
      const path = resolve(cwd, value);
      file = into.get(path);
      if (!file) into.set(path, (file = { lines: new Map(), branches: new Map(), functions: new Map() }));
      fnLines.clear();
    } else if (tag === 'end_of_record') {
      file = undefined;
    } else if (file && tag === 'DA') {
      const [ln, hits] = value.split(',');
      add(file.lines, Number(ln), Number(hits));
    } else if (file && tag === 'BRDA') {
      const [ln, block, branch, hits] = value.split(',');
      add(file.branches, `${ln},${block},${branch}`, hits === '-' ? 0 : Number(hits));
    } else if (file && tag === 'FN') {
      const comma = value.indexOf(',');
      fnLines.set(value.slice(comma + 1), Number(value.slice(0, comma)));
      add(file.functions, `${value.slice(0, comma)},${value.slice(comma + 1)}`, 0);
    } else if (file && tag === 'FNDA') {
      const comma = value.indexOf(',');
      const name = value.slice(comma + 1);
      add(file.functions, `${fnLines.get(name) ?? '?'},${name}`, Number(value.slice(0, comma)));
    }
  }
  return into;
}

const count = (hits: Iterable<number>): Count => {
  let covered = 0;
  let total = 0;
  for (const h of hits) {
    total += 1;
    if (h > 0) covered += 1;
  }
  return { covered, total };
};

/** Totals over the files whose path `select` accepts. */
export function totals(files: ReadonlyMap<string, FileCoverage>, select: (path: string) => boolean): Totals {
  const sum: Totals = { files: 0, lines: { covered: 0, total: 0 }, branches: { covered: 0, total: 0 }, functions: { covered: 0, total: 0 } };
  for (const [path, file] of files) {
    if (!select(path)) continue;
    sum.files += 1;
    for (const kind of ['lines', 'branches', 'functions'] as const) {
      const c = count(file[kind].values());
      sum[kind].covered += c.covered;
      sum[kind].total += c.total;
    }
  }
  return sum;
}

/** `covered/total (pct %)`, one decimal; `-` when there is nothing to count. */
export function percent(c: Count): string {
  if (c.total === 0) return '-';
  return `${((100 * c.covered) / c.total).toFixed(1)} % (${c.covered}/${c.total})`;
}
