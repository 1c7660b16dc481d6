import type { BenchResults } from '../results.js';

/**
 * What the report reads of each optional section, as paths (`a.b`; `a[].b`: `b` of every element of
 * the array `a`). A section that lacks one of them was written by an older bench (or by hand) and is
 * left out of the report as a whole: a table with some columns made up would look measured.
 */
const BACKEND_SECTIONS: Record<string, readonly string[]> = {
  inline: [
    'sizes[].steps',
    'sizes[].stepsPerSecond',
    'sizes[].usPerStep',
    'sizes[].overheadRatio',
    'sizes[].startToResultMs',
    'sizes[].plainUsPerStep',
    'usPerStepByMethod',
    'roundTripsPerStep',
    'storeCallsPerStep',
    'byMethodPerStep',
  ],
  replay: [
    'sizes[].steps',
    'sizes[].resumeMs',
    'sizes[].roundTrips',
    'sizes[].stepReadRoundTrips',
    'sizes[].stepLoads',
    'sizes[].deterministic',
    'sizes[].byMethod',
    'growthRatio',
    'usPerFinishedStepSlope',
  ],
  wake: [
    'variants[].sticky',
    'variants[].sizes[].steps',
    'variants[].sizes[].cpuUs',
    'variants[].sizes[].wallMs',
    'variants[].sizes[].bytesRead',
    'variants[].sizes[].stepsRead',
    'variants[].loops[].waits',
    'variants[].loops[].cpuUsPerIteration',
  ],
  latency: [
    'sameProcess.samples',
    'sameProcess.p50Ms',
    'sameProcess.p99Ms',
    'polling.p50Ms',
    'polling.p99Ms',
    'inlineStartToResultMs',
    'queuedStartToResultMs',
    'tenStepWorstLagMs',
    'readsPerResult.inline',
    'readsPerResult.queued',
  ],
  localThroughput: ['runs', 'concurrency', 'runsPerSecond'],
  idle: ['passes', 'requestsPerPass', 'requestsPerSecond', 'recoveryIntervalMs', 'clientRequests'],
  cpu: ['runs', 'steps', 'empty.usPerStep', 'filled.usPerStep', 'filled.finishedRuns'],
  flow: [
    'runs',
    'costs[].variant',
    'costs[].perRun',
    'costs[].slotsByMethod',
    'fairness.bigRuns',
    'fairness.smallRuns',
    'fairness.workMs',
    'fairness.concurrency',
    'fairness.smallDoneMs',
    'fairness.bigDoneMs',
    'fairness.bigDoneWhenSmallDone',
    'fairness.roundTripsPerRun',
  ],
  check: [
    'populatedBy',
    'steps',
    'stepRows',
    'sizes[].runs',
    'sizes[].wallMs',
    'sizes[].runsPerSecond',
    'sizes[].cpuMs',
    'sizes[].readsOnlyMs',
    'sizes[].readsOnlyCpuMs',
    'sizes[].peakRssGrowthMiB',
    'sizes[].peakHeapGrowthMiB',
    'sizes[].streamedLiveHeapMiB',
    'sizes[].reportHeapMiB',
    'diverging.runs',
    'diverging.insertedAt',
    'diverging.wallMs',
    'diverging.runsPerSecond',
    'diverging.cpuMs',
    'roundTripsPerRun',
    'replayCpuUsPerRun',
    'replayCpuUsPerStep',
  ],
};

/** The same for the sections of the whole run; arrays are checked element by element. */
const RUN_SECTIONS: Record<string, readonly string[]> = {
  floor: [
    'steps',
    'inFlight',
    'usPerInsert',
    'writeTransactionsPerInsert',
    'cairnUsPerStep',
    'cairnWriteTransactionsPerRunStep',
    'cairnAsyncCommitsPerStep',
    'ratio',
    'usPerInsertInFlight',
    'cairnUsPerStepInFlight',
    'ratioInFlight',
  ],
  processThroughput: [
    'queue',
    'store',
    'runs',
    'concurrency',
    'idleSeconds',
    'byWorkers[].workers',
    'byWorkers[].runsPerSecond',
    'byWorkers[].seconds',
    'byWorkers[].requestsPerRun',
    'byWorkers[].netRequestsPerRun',
    'byWorkers[].idleRequestsPerSecond',
    'byWorkers[].topPerRun',
    'byWorkers[].idleTop',
  ],
  storeDispatch: [
    'store',
    'mechanism',
    'runs',
    'idleSeconds',
    'byWorkers[].workers',
    'byWorkers[].pickupP50Ms',
    'byWorkers[].pickupP90Ms',
    'byWorkers[].eventP50Ms',
    'byWorkers[].requestsPerRun',
    'byWorkers[].claimsPerExecution',
    'byWorkers[].lostClaimsPerExecution',
    'byWorkers[].idleRequestsPerSecond',
    'byWorkers[].topPerRun',
    'byWorkers[].idleTop',
  ],
  pushedResults: [
    'store',
    'mechanism',
    'samples',
    'concurrent',
    'pushed.p50Ms',
    'pushed.p95Ms',
    'pushed.pollingReadsPerResult',
    'polled.p50Ms',
    'polled.p95Ms',
    'polled.pollingReadsPerResult',
    'pushedConcurrent.p50Ms',
    'polledConcurrent.p50Ms',
  ],
  fairness: [
    'queue',
    'store',
    'bigRuns',
    'smallRuns',
    'concurrency',
    'groupConcurrency',
    'firstClaimMs',
    'smallWorstWaitMs',
    'bigWorstWaitMs',
    'medianRunMs',
    'totalMs',
  ],
  observability: [
    'runs',
    'stepsPerRun',
    'reps',
    'variants[].name',
    'variants[].microsPerStep',
    'variants[].ratio',
    'checksPerStep',
    'checkNanos',
    'idleOverheadPercent',
  ],
};

/** The run's sections that are lists (one entry per queue or store); the others are single objects. */
const RUN_LISTS = new Set(['processThroughput', 'storeDispatch', 'pushedResults', 'fairness']);

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first of `paths` that `value` lacks, or `undefined` when it has them all. */
function firstMissing(value: unknown, paths: readonly string[]): string | undefined {
  return paths.find((path) => !has(value, path.split('.')));
}

function has(value: unknown, parts: readonly string[]): boolean {
  if (parts.length === 0) return value !== undefined && value !== null;
  const [head, ...rest] = parts as [string, ...string[]];
  if (head.endsWith('[]')) {
    const list = isObject(value) ? value[head.slice(0, -2)] : undefined;
    return Array.isArray(list) && list.every((item) => has(item, rest));
  }
  return isObject(value) && has(value[head], rest);
}

/**
 * A saved results file (`bench/results/*.json`), read for `--render`. Guarantees a value the report
 * renders without failing: a section absent from the file is omitted, and so is one an older bench
 * wrote without a field the report reads now, with a note naming the section and the field.
 * Throws an `Error` saying so when the text is not a bench results file at all.
 */
export function readResults(text: string, source: string): BenchResults {
  const raw: unknown = JSON.parse(text);
  if (!isObject(raw) || typeof raw.mode !== 'string') throw new Error(`${source} is not a bench results file: it has no mode`);
  if (!isObject(raw.machine) || typeof raw.machine.date !== 'string') throw new Error(`${source} is not a bench results file: it has no machine.date`);
  const omitted: string[] = [];
  const kept = (section: string, value: Json, subject: string): boolean => {
    const missing = firstMissing(value, (BACKEND_SECTIONS[section] ?? RUN_SECTIONS[section])!);
    if (missing !== undefined) omitted.push(`${section} of ${subject} omitted: the file has no ${section}.${missing}`);
    return missing === undefined;
  };
  const list = (value: unknown) => (Array.isArray(value) ? value.filter(isObject) : []);

  const backends = list(raw.backends).map((backend) => {
    const out: Json = { ...backend, errors: list(backend.errors), incidents: Array.isArray(backend.incidents) ? backend.incidents : [] };
    const subject = String(backend.title ?? backend.name);
    for (const section of Object.keys(BACKEND_SECTIONS)) {
      const value = backend[section];
      if (value === undefined || !isObject(value) || !kept(section, value, subject)) delete out[section];
    }
    return out;
  });
  const results: Json = {
    ...raw,
    machine: { servers: {}, ...raw.machine },
    backends,
    skipped: list(raw.skipped),
    errors: list(raw.errors),
    notes: Array.isArray(raw.notes) ? raw.notes : [],
    durationMs: typeof raw.durationMs === 'number' ? raw.durationMs : undefined,
  };
  for (const section of Object.keys(RUN_SECTIONS)) {
    const value = raw[section];
    if (RUN_LISTS.has(section)) {
      results[section] = list(value).filter((entry) => kept(section, entry, [entry.queue, entry.store].filter(Boolean).join(' + ')));
    } else if (!isObject(value) || !kept(section, value, 'the run')) {
      delete results[section];
    }
  }
  (results.notes as string[]).push(...omitted);
  return results as unknown as BenchResults;
}
