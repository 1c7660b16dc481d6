// The client version matrix reads its bounds from the peer ranges: one range per driver across the
// packages, the oldest bound is the range's minimum, and the ranges admit the versions users run
// (a project on kysely 0.28 installs @cairn/kysely without ERESOLVE).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientRanges, matrixScenario } from '../client-matrix.js';
import { semver } from '../semver.js';
import { publicPackages } from '../workspace.js';

test('every driver has one peer range across the packages, and its oldest bound is the range minimum', () => {
  const ranges = new Map(clientRanges().map((c) => [c.name, c]));
  assert.deepEqual([...ranges.keys()].sort(), ['better-sqlite3', 'bullmq', 'ioredis', 'kysely', 'mongodb', 'mysql2', 'pg', 'pg-boss']);
  for (const c of ranges.values()) assert.ok(semver.satisfies(c.oldest, c.range), `${c.name}: ${c.oldest} in ${c.range}`);
  assert.equal(ranges.get('kysely')?.oldest, '0.27.0');
  // The versions users already run, which the ranges before issue 20 refused.
  for (const [name, version] of [
    ['kysely', '0.28.19'],
    ['ioredis', '5.11.1'],
    ['bullmq', '5.81.5'],
    ['mongodb', '6.22.0'],
  ] as const) {
    assert.ok(semver.satisfies(version, ranges.get(name)?.range as string), `${name}@${version} is admitted`);
  }
  assert.deepEqual(ranges.get('ioredis')?.declaredBy.sort(), ['@cairn/cli', '@cairn/queue-bullmq', '@cairn/redis']);
});

test('two packages declaring different ranges for one driver are refused, naming both', () => {
  const packages = publicPackages().map((p) =>
    p.name === '@cairn/redis' ? { ...p, json: { ...p.json, peerDependencies: { ...p.json.peerDependencies, ioredis: '^6.0.0' } } } : p,
  );
  assert.throws(() => clientRanges(packages), /ioredis: the peer ranges differ \(.*@cairn\/redis "\^6\.0\.0"/);
});

test('the oldest project pins each driver to its minimum; the newest hands npm the range', () => {
  const urls = { POSTGRES_URL: 'p', MYSQL_URL: 'm', REDIS_URL: 'r', MONGODB_URL: 'g' };
  const oldest = matrixScenario('oldest', urls);
  const newest = matrixScenario('newest', urls);
  for (const c of clientRanges()) {
    assert.equal(oldest.registry[c.name], c.oldest);
    assert.equal(newest.registry[c.name], c.range);
  }
  assert.equal(oldest.fixture, 'clients');
});
