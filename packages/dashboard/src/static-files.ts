import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A file the dashboard serves, read once at start. */
export interface StaticFile {
  type: string;
  body: Buffer;
}

// The package's public/ folder: one level up from src/ (source) and from dist/ (published).
const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The pages and assets, by request path: `/` and `/overview` (the home: per workflow, failures and
 * backlog), `/runs` (the runs table), `/runs/` (the run page's HTML, served for every `/runs/<id>`), and `/assets/<file>` for the scripts and the stylesheet. Read
 * into memory once: they are a few KiB, and nothing else on disk is ever served.
 */
export function loadStaticFiles(dir = PUBLIC_DIR): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    files.set(`/assets/${name}`, { type, body: readFileSync(join(dir, name)) });
  }
  const page = (name: string) => {
    const file = files.get(`/assets/${name}`);
    if (!file) throw new Error(`@cairn/dashboard: ${join(dir, name)} is missing from the package`);
    return file;
  };
  files.set('/', page('overview.html'));
  files.set('/runs', page('runs.html'));
  files.set('/runs/', page('run.html'));
  files.set('/overview', page('overview.html'));
  return files;
}
