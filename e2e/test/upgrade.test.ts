/**
 * Upgrading Cairn with runs in flight (issue 27, part 6): runs of every kind are suspended under
 * each earlier build packed in e2e/upgrade/builds/ (a child process that imports only that build),
 * then resumed by today's packages on the same database, migrations applied on open. Every run must
 * end exactly as it would have without the upgrade, each step body run exactly once (the retried
 * step twice: its first attempt fails). SQLite and PostgreSQL. See e2e/upgrade/README.md.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { WorkflowStore } from '@cairn/core/backend';
import { kyselyPostgres, kyselyStore } from '../proof/deps.js';
import { semanticsOf } from '../upgrade/workflows.js';
import { createPostgresDatabase, dropPostgresDatabase, stopSharedServices, uniqueName, usePostgres } from '../src/services/index.js';
import {
  failureTable,
  layOutOldBuild,
  listBuilds,
  removeDir,
  resumeWithToday,
  summaryByKind,
  suspendUnderOldBuild,
  type UpgradeDb,
} from '../upgrade/harness.js';

/** Runs per kind: 15 kinds x 4 = 60 top-level runs, plus 8 children. */
const PER_KIND = 4;
const RESUME_TIMEOUT_MS = 15_000;

const builds = listBuilds();
const pg = await usePostgres();
after(() => stopSharedServices());

async function upgradeCase(
  t: { diagnostic(message: string): void },
  build: (typeof builds)[number],
  db: UpgradeDb,
  openToday: () => Promise<WorkflowStore>,
): Promise<void> {
  const root = layOutOldBuild(build);
  try {
    const log = join(root, 'side-effects.log');
    const t0 = Date.now();
    const { runs, stderr } = await suspendUnderOldBuild(root, db, log, PER_KIND);
    t.diagnostic(`old build ${build.manifest.ref} (${build.manifest.commit.slice(0, 12)}): ${runs.length} runs suspended in ${Date.now() - t0} ms`);
    for (const line of stderr.trim().split('\n')) if (line) t.diagnostic(line);

    const t1 = Date.now();
    const store = await openToday();
    let verdicts: Awaited<ReturnType<typeof resumeWithToday>>;
    try {
      const core = build.manifest.packages.find((p) => p.name === '@cairn/core')?.version ?? '0.1.0';
      verdicts = await resumeWithToday(store, runs, log, RESUME_TIMEOUT_MS, semanticsOf(core));
    } finally {
      await store.close();
    }
    const failing = verdicts.filter((v) => !v.ok);
    t.diagnostic(`today's build: ${verdicts.length - failing.length}/${verdicts.length} runs ended right in ${Date.now() - t1} ms`);
    for (const line of summaryByKind(verdicts).split('\n')) t.diagnostic(line);
    assert.equal(
      failing.length,
      0,
      `${failing.length} of ${verdicts.length} runs suspended under ${build.manifest.ref} did not end as they would have without the upgrade:\n` +
        `${summaryByKind(verdicts)}\n\n${failureTable(verdicts)}`,
    );
  } finally {
    removeDir(root);
  }
}

describe('upgrade: runs suspended under an earlier build resume under this one', () => {
  it('has at least one earlier build packed', () => {
    assert.ok(builds.length > 0, 'no build under e2e/upgrade/builds/ (scripts/upgrade/pack-build.sh makes one)');
  });

  for (const build of builds) {
    it(`${build.manifest.ref} -> today, SQLite`, { timeout: 90_000 }, async (t) => {
      const file = join(mkdtempSync(join(tmpdir(), 'cairn-upgrade-sqlite-')), 'cairn.sqlite');
      try {
        const { openSqliteStore } = await kyselyStore();
        await upgradeCase(t, build, { kind: 'sqlite', file }, () => openSqliteStore(file));
      } finally {
        removeDir(join(file, '..'));
      }
    });

    it(`${build.manifest.ref} -> today, PostgreSQL`, { timeout: 90_000, ...(pg.skipped ? { skip: pg.reason } : {}) }, async (t) => {
      if (pg.skipped) return;
      const url = await createPostgresDatabase(pg.url, uniqueName('upgrade'));
      try {
        const { openPostgresStore } = await kyselyPostgres();
        await upgradeCase(t, build, { kind: 'postgres', url }, () => openPostgresStore(url));
      } finally {
        await dropPostgresDatabase(url);
      }
    });
  }
});
