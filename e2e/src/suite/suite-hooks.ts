import { after, before } from 'node:test';
import type { TestContext } from 'node:test';

/** What the suite-level hooks use of a store or queue harness. */
export interface SuiteHarness {
  name: string;
  source?: string | (() => string);
  // biome-ignore lint/suspicious/noConfusingVoidType: a setup that returns nothing (`async setup() {}`) must type-check; `undefined` in its place would reject it
  setup?(): Promise<void | { skip?: string }>;
  teardown?(): Promise<void>;
}

/** What `registerSuiteHooks` shares with the suite's cases. */
export interface SuiteProgress {
  /** Cases registered, passed and skipped; the rest failed or never ran. */
  counts: { total: number; passed: number; skipped: number };
  /**
   * Runs one case's `body` from its `it`, counting it: skipped with the reason when `setup` found
   * the backend unavailable or when `body` returns a reason, passed when `body` returns nothing.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a case body that returns nothing passes; `undefined` would make every body end in `return undefined`
  runCase(t: TestContext, body: () => Promise<string | void>): Promise<void>;
}

function sourceOf(harness: SuiteHarness): string {
  try {
    return (typeof harness.source === 'function' ? harness.source() : harness.source) ?? 'source not stated';
  } catch (error) {
    return `source unknown (${error instanceof Error ? error.message : String(error)})`;
  }
}

/**
 * Registers, inside the current `describe`, a `before` hook that runs `harness.setup()` (a `skip`
 * result makes every case skip with that reason) and an `after` hook that runs
 * `harness.teardown()` and then, even if it failed, prints the summary line
 * `<label> <name> (<source>): N passed, N failed, N skipped`.
 */
export function registerSuiteHooks(label: string, harness: SuiteHarness): SuiteProgress {
  const counts = { total: 0, passed: 0, skipped: 0 };
  let unavailable: string | undefined;

  before(async () => {
    const result = await harness.setup?.();
    if (result && typeof result.skip === 'string') unavailable = result.skip;
  });

  after(async (context) => {
    try {
      await harness.teardown?.();
    } finally {
      // Cases whose body never ran (a failed setup) count as failed, not as missing.
      const failed = counts.total - counts.passed - counts.skipped;
      const source = unavailable === undefined ? sourceOf(harness) : `unavailable: ${unavailable}`;
      const line = `${label} ${harness.name} (${source}): ${counts.passed} passed, ${failed} failed, ${counts.skipped} skipped`;
      // A suite-level hook gets a SuiteContext without `diagnostic` on some Node versions.
      if ('diagnostic' in context && typeof context.diagnostic === 'function') context.diagnostic(line);
      else console.log(`# ${line}`);
    }
  });

  return {
    counts,
    async runCase(t, body) {
      const skip = unavailable === undefined ? await body() : `${harness.name} unavailable: ${unavailable}`;
      if (typeof skip === 'string') {
        counts.skipped += 1;
        t.skip(skip);
        return;
      }
      counts.passed += 1;
    },
  };
}
