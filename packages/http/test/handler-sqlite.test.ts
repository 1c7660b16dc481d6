// The push handler over SQLite: a file shared by this process and the handler's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dispatchCases } from './support/dispatch-cases.js';
import { type PushTarget, pushedCases } from './support/pushed-cases.js';

let dir = '';
const target: PushTarget = {
  name: 'SQLite',
  async setup() {
    dir = mkdtempSync(join(tmpdir(), 'cairn-http-sqlite-'));
    return { url: `sqlite:${join(dir, 'cairn.sqlite')}` };
  },
  async teardown() {
    if (dir) rmSync(dir, { recursive: true, force: true });
  },
};
pushedCases(target);
dispatchCases(target);
