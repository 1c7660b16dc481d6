import { randomUUID } from 'node:crypto';
import type { RunQuery } from '@cairn/core';
import type { BackendInstance } from '../backends/types.js';
import { median, nowMs, percentile } from '../stats.js';
import { benchEngine } from './workflows.js';

export interface TagListingOptions {
  /** Runs created, each with a `customer` tag (`customers` distinct values) and a `plan` tag (3 values). */
  runs: number;
  customers: number;
  /** Listings timed per query. */
  samples: number;
}

export interface TagListingResult {
  runs: number;
  customers: number;
  /** Per query: its label, the runs on its first page, and the first page's p50 / p95, ms. */
  queries: Array<{ query: string; found: number; p50Ms: number; p95Ms: number }>;
}

const CREATE_IN_FLIGHT = 16;

/**
 * Issue 32's target: finding runs by tag returns the first page in ≤ 20 ms (at a million runs on
 * PostgreSQL; here at `runs`, loaded by the scenario itself). Creates `runs` runs with two tags each
 * straight in the store, then times the first page (50 runs) of `engine.listRuns` by one rare tag,
 * by a rare and a common tag (AND), and by a common tag with a status filter.
 */
export async function tagListing(backend: BackendInstance, options: TagListingOptions): Promise<TagListingResult> {
  const opened = await backend.openStore();
  const store = await opened.peer();
  const now = Date.now();
  let next = 0;
  const lane = async () => {
    while (next < options.runs) {
      const n = next++;
      await store.runs.create(
        { id: randomUUID(), workflow: 'bench-tags', version: '1', input: null, tags: { customer: `c-${n % options.customers}`, plan: `p${n % 3}` } },
        now + n,
      );
    }
  };
  await Promise.all(Array.from({ length: CREATE_IN_FLIGHT }, lane));
  const engine = benchEngine(store);
  const queries: Array<[string, RunQuery]> = [
    ['customer=c-7 (one rare tag)', { tags: { customer: 'c-7' } }],
    ['customer=c-7, plan=p1 (AND)', { tags: { customer: 'c-7', plan: 'p1' } }],
    ['plan=p2, status pending (a common tag)', { tags: { plan: 'p2' }, status: 'pending' }],
  ];
  const out: TagListingResult['queries'] = [];
  try {
    for (const [label, query] of queries) {
      const times: number[] = [];
      let found = 0;
      for (let i = 0; i < options.samples; i++) {
        const started = nowMs();
        const page = await engine.listRuns({ ...query, limit: 50 });
        times.push(nowMs() - started);
        found = page.runs.length;
      }
      out.push({ query: label, found, p50Ms: median(times), p95Ms: percentile(times, 95) });
    }
  } finally {
    await opened.close();
  }
  return { runs: options.runs, customers: options.customers, queries: out };
}
