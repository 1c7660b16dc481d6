import type { BackendReport, BenchResults } from '../results.js';
import type { PushedResultsResult } from '../scenarios/pushed-results.js';
import { fmt, ms, table, us } from './format.js';
import { codecSection } from './codec-section.js';
import { streamsSection } from './streams-section.js';
import { requestsSection } from './requests-section.js';
import { bulkSection } from './bulk-section.js';
import { tagsSection } from './tags-section.js';
import { cpuTarget } from './targets.js';

/** The whole report as Markdown: machine, one table per question, targets, notes. */
export function renderMarkdown(r: BenchResults): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`## Cairn benchmark (${r.mode}) — ${m.date.slice(0, 10)}`);
  out.push('');
  out.push(`Command: \`${r.command}\``);
  out.push('');
  out.push(
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}.${m.loadAtStart === undefined ? '' : ` Load average (1 min) ${m.loadAtStart} at the start, ${m.loadAtEnd ?? '?'} at the end.`}`,
  );
  for (const [name, server] of Object.entries(m.servers)) out.push(`- ${name}: ${server}`);
  out.push('');

  const withInline = r.backends.filter((b) => b.inline);
  if (withInline.length > 0) {
    const sizes = withInline[0]!.inline!.sizes.map((s) => s.steps);
    out.push(`### Sequential inline steps (median of ${r.mode === 'full' ? 'repetitions after a warm-up' : 'a few runs'})`);
    out.push('');
    const head = ['backend'];
    for (const n of sizes) head.push(`N=${n}: steps/s`, `N=${n}: per step`, `N=${n}: × plain call`, `N=${n}: start→result`);
    out.push(
      table(
        head,
        withInline.map((b) => {
          const row = [b.title];
          for (const s of b.inline!.sizes) row.push(fmt(s.stepsPerSecond, 0), us(s.usPerStep), `${fmt(s.overheadRatio, 0)}×`, ms(s.startToResultMs));
          return row;
        }),
      ),
    );
    out.push('');
    out.push(
      "Steps/s and per step: the execution alone (claim → final run transition), i.e. one execution driven through `startRun(..., { mode: 'inline' })`. Start→result: `startRun` + the execution + one `result()` called after it ended (so that no result poll lands inside the counted window; the latency table below has `result()` waiting from the start).",
    );
    out.push('');
    out.push(`Where one step's time goes (N=${sizes[sizes.length - 1]}, client side: awaiting each store method, driver included; the rest is the engine):`);
    out.push('');
    out.push(
      table(
        ['backend', 'steps.insert (the finished step; or its start)', 'steps.transition (a finish after a recorded start)', 'engine (rest)'],
        withInline.map((b) => {
          const t = b.inline!.usPerStepByMethod;
          return [b.title, us(t['steps.insert']), us(t['steps.transition']), us(t['engine (rest)'])];
        }),
      ),
    );
    const plain = withInline[0]!.inline!.sizes.map((s) => `${us(s.plainUsPerStep)} (N=${s.steps})`).join(', ');
    out.push('');
    out.push(`Plain awaited async call of the same no-op body: ${plain}.`);
    out.push('');
  }

  const withCpu = r.backends.filter((b) => b.cpu);
  if (withCpu.length > 0) {
    const c = withCpu[0]!.cpu!;
    out.push(
      `### Engine CPU per inline step (client side, driver included; ${c.runs} sequential ${c.steps}-step runs per repetition; all repetitions together, garbage collection included)`,
    );
    out.push('');
    out.push(
      table(
        [
          'backend',
          c.warmUp === undefined ? 'first steps (cold)' : `first ${fmt(c.warmUp.coldSteps, 0)} steps (cold)`,
          'warm-up',
          c.warmUp === undefined ? 'empty store' : `young store (${fmt(c.empty.finishedRuns, 0)} finished runs)`,
          `store holding ${fmt(c.filled.finishedRuns, 0)} finished runs`,
          'filled / young',
          'median repetition (young / filled)',
          'target',
        ],
        withCpu.map((b) => {
          const x = b.cpu!;
          return [
            b.title,
            x.warmUp === undefined ? '–' : us(x.warmUp.coldUsPerStep),
            x.warmUp === undefined ? '–' : `${fmt(x.warmUp.steps, 0)} steps`,
            us(x.empty.usPerStep),
            us(x.filled.usPerStep),
            `${fmt(x.filled.usPerStep / x.empty.usPerStep, 2)}×`,
            x.empty.medianUsPerStep === undefined || x.filled.medianUsPerStep === undefined
              ? '–'
              : `${us(x.empty.medianUsPerStep)} / ${us(x.filled.medianUsPerStep)}`,
            cpuTarget(b.name) === undefined ? '–' : `≤ ${cpuTarget(b.name)} µs`,
          ];
        }),
      ),
    );
    out.push('');
    out.push(
      "`process.cpuUsage()` (user + system) of the bench process around `startRun` + `result()` of each run, divided by its steps: the run's create, claim and completion are included. The first steps of the fresh engine are measured on their own (V8 has not compiled the engine's code yet: a process pays them once); then repetitions run until one stopped getting cheaper (the median of the last five within 10 % of the five before), and only then are the young and the filled store measured. Each figure is the CPU of all repetitions over all their steps (the mean), so a major garbage collection counts where it lands; the median repetition beside it is what a step costs between collections. The store is opened uncounted, as an application opens it. The server's CPU is not included (SQLite runs in-process, so its figure includes SQLite itself).",
    );
    out.push('');
  }

  out.push(...codecSection(r.backends));
  out.push(...streamsSection(r.backends));
  out.push(...requestsSection(r.backends));
  out.push(...bulkSection(r.backends));
  out.push(...tagsSection(r.backends));

  const withFlow = r.backends.filter((b) => b.flow);
  if (withFlow.length > 0) {
    const f0 = withFlow[0]!.flow!;
    const unitOf = (b: (typeof withFlow)[number]) => (b.driverCounted ? '' : ' (store calls)');
    out.push(`### Flow control: round trips of a limited run (${f0.runs} sequential inline one-step runs per variant)`);
    out.push('');
    out.push(
      table(
        ['backend', 'no limit', 'concurrency limit', 'start rate limit', 'slots calls per limited run'],
        withFlow.map((b) => {
          const by = (v: string) => b.flow!.costs.find((c) => c.variant === v);
          const plainCost = by('no limit')?.perRun ?? Number.NaN;
          const cell = (v: string) => {
            const c = by(v);
            return c === undefined ? '–' : `${fmt(c.perRun, 2)} (+${fmt(c.perRun - plainCost, 2)})`;
          };
          const slots = (v: string) =>
            Object.entries(by(v)?.slotsByMethod ?? {})
              .map(([m, n]) => `${m} ${fmt(n, 2)}`)
              .join(', ');
          return [
            `${b.title}${unitOf(b)}`,
            fmt(plainCost, 2),
            cell('concurrency limit'),
            cell('start rate limit'),
            `concurrency: ${slots('concurrency limit')}; rate: ${slots('start rate limit')}`,
          ];
        }),
      ),
    );
    out.push('');
    const k0 = f0.fairness;
    out.push(
      `### Flow control: fairness across keys (limit 1 per key; key "big" submits ${k0.bigRuns} runs, then key "small" ${k0.smallRuns}; ${k0.workMs} ms of work per run; worker concurrency ${k0.concurrency})`,
    );
    out.push('');
    out.push(
      table(
        ['backend', 'small key done', 'big key done', 'big runs done when small was', 'round trips per run (drain)'],
        withFlow.map((b) => {
          const k = b.flow!.fairness;
          return [b.title, ms(k.smallDoneMs), ms(k.bigDoneMs), `${k.bigDoneWhenSmallDone} / ${k.bigRuns}`, fmt(k.roundTripsPerRun, 2)];
        }),
      ),
    );
    out.push('');
  }

  const withCounts = r.backends.filter((b) => b.inline || b.replay);
  if (withCounts.length > 0) {
    out.push('### Round trips, counted at the driver');
    out.push('');
    out.push(
      table(
        [
          'backend',
          'per inline step',
          'store calls per step',
          'per step, by store method',
          'per step, by request',
          'per replay',
          'step reads per replay',
          'per replay, by store method',
        ],
        withCounts.map((b) => {
          const i = b.inline;
          const rp = b.replay?.sizes[b.replay.sizes.length - 1];
          const by = (o: Record<string, number> | undefined) =>
            o
              ? Object.entries(o)
                  .map(([k, v]) => `${k} ${fmt(v, Number.isInteger(v) ? 0 : 2)}`)
                  .join(', ')
              : '–';
          return [
            b.driverCounted ? b.title : `${b.title} (store calls)`,
            i ? fmt(i.roundTripsPerStep, 2) : '–',
            i ? fmt(i.storeCallsPerStep, 2) : '–',
            by(i?.byMethodPerStep),
            b.driverCounted ? by(i?.byKindPerStep) : '–',
            rp ? String(rp.roundTrips) : '–',
            rp ? String(rp.stepReadRoundTrips) : '–',
            by(rp?.byMethod),
          ];
        }),
      ),
    );
    out.push('');
    out.push(
      '"Per step" is the marginal cost: (round trips of the larger run − the smaller) / (difference in steps), counted from the claim to the final transition.',
    );
    out.push('');
  }

  const withReplay = r.backends.filter((b) => b.replay);
  if (withReplay.length > 0) {
    out.push('### Replay cost as the run grows (resume of a run with N finished steps; median)');
    out.push('');
    out.push(
      table(
        ['backend', 'short run', 'medium run', 'long run', 'long / medium', 'per finished step (slope)', 'round trips per replay'],
        withReplay.map((b) => {
          const sizes = b.replay!.sizes;
          const cells = sizes.map((s) => `N=${s.steps}: ${ms(s.resumeMs)}`);
          const last = sizes[sizes.length - 1]!;
          const prev = sizes[sizes.length - 2]!;
          return [
            b.title,
            ...cells,
            `${fmt(b.replay!.growthRatio, 2)}× (for ${fmt(last.steps / prev.steps, 0)}× the steps)`,
            us(b.replay!.usPerFinishedStepSlope),
            sizes.map((s) => s.roundTrips).join(' / '),
          ];
        }),
      ),
    );
    out.push('');
  }

  const withWake = r.backends.filter((b) => b.wake);
  if (withWake.length > 0) {
    out.push('### Wake cost against history length (a run suspended after N steps, woken by an event; medians)');
    out.push('');
    const rows: string[][] = [];
    for (const b of withWake) {
      for (const v of b.wake!.variants) {
        const [short, long] = [v.sizes[0]!, v.sizes[v.sizes.length - 1]!];
        const [few, many] = [v.loops[0]!, v.loops[v.loops.length - 1]!];
        rows.push([
          `${b.title}, ${v.sticky ? 'kept executions' : 'replay per wake'}`,
          `N=${short.steps}: ${us(short.cpuUs)} / ${ms(short.wallMs)}`,
          `N=${long.steps}: ${us(long.cpuUs)} / ${ms(long.wallMs)}`,
          `${fmt(long.cpuUs / short.cpuUs, 2)}×`,
          `${fmt(short.bytesRead, 0)} / ${fmt(long.bytesRead, 0)} (${fmt(long.bytesRead / short.bytesRead, 2)}×)`,
          `${fmt(short.stepsRead, 0)} / ${fmt(long.stepsRead, 0)}`,
          `K=${few.waits}: ${us(few.cpuUsPerIteration)}, K=${many.waits}: ${us(many.cpuUsPerIteration)} (${fmt(many.cpuUsPerIteration / few.cpuUsPerIteration, 2)}×)`,
        ]);
      }
    }
    out.push(
      table(
        [
          'backend',
          'CPU / window at short N',
          'at long N',
          'CPU long / short',
          'bytes read per wake (ratio)',
          'step records read per wake',
          'CPU per iteration of a wait loop',
        ],
        rows,
      ),
    );
    out.push('');
    out.push(
      "CPU: this process (`process.cpuUsage()`) from `engine.sendEvent` to the execution's transition back to `waiting` (the send, the local queue, the claim, the resume or replay, the wait's record). Window: `runs.claim` to that transition. Bytes read: every store call's result in the window, as JSON. Wait loop: a run waiting for an event K times in a row, each woken in turn, the mean per iteration. \"Replay per wake\" is `stickyExecutions: false`, what every wake cost before issue 30.",
    );
    out.push('');
  }

  const withLatency = r.backends.filter((b) => b.latency);
  if (withLatency.length > 0) {
    const n = withLatency[0]!.latency!.sameProcess.samples;
    out.push(`### Result latency: run completion → result() resolves (${n} runs each)`);
    out.push('');
    out.push(
      table(
        [
          'backend',
          'same process p50',
          'same process p99',
          'polling client p50',
          'polling client p99',
          'start→result 10 steps inline',
          'start→result 10 steps queued (local queue)',
          'worst completion→result of those',
        ],
        withLatency.map((b) => {
          const l = b.latency!;
          return [
            b.title,
            ms(l.sameProcess.p50Ms),
            ms(l.sameProcess.p99Ms),
            ms(l.polling.p50Ms),
            ms(l.polling.p99Ms),
            ms(l.inlineStartToResultMs),
            ms(l.queuedStartToResultMs),
            ms(l.tenStepWorstLagMs),
          ];
        }),
      ),
    );
    out.push('');
  }

  if (r.floor) {
    const f = r.floor;
    out.push('### PostgreSQL against its physical floor (same server, fsync on)');
    out.push('');
    if (f.warmUpSteps !== undefined) {
      out.push(
        `Each side ran ${fmt(f.warmUpSteps, 0)} steps first, unmeasured (the floor's INSERT loop and Cairn's runs on both stores), so that V8 compiled the code of both before the medians were taken.`,
      );
      out.push('');
    }
    out.push(
      table(
        ['', 'per step', 'write transactions per step', 'of which synchronous_commit=off'],
        [
          [`floor: one autocommit INSERT per step (pg, ${f.steps} steps)`, us(f.usPerInsert), fmt(f.writeTransactionsPerInsert, 2), '0'],
          [
            `Cairn: ${f.steps}-step inline run, start→result (alternating with the floor), unnamed statements (\`createKyselyStore\`'s default)`,
            us(f.cairnUsPerStep),
            `${fmt(f.cairnWriteTransactionsPerStep, 2)} per extra step (${fmt(f.cairnWriteTransactionsPerRunStep, 2)} with the run's own writes)`,
            fmt(f.cairnAsyncCommitsPerStep, 2),
          ],
          ['ratio', `${fmt(f.ratio, 2)}×`, '', ''],
          [`floor, ${f.inFlight} INSERT loops at once (one connection each)`, us(f.usPerInsertInFlight), '', ''],
          [`Cairn, ${f.inFlight} runs in flight`, us(f.cairnUsPerStepInFlight), '', ''],
          [`ratio, ${f.inFlight} in flight`, `${fmt(f.ratioInFlight, 2)}×`, '', ''],
          ...(f.prepared
            ? [
                [`Cairn, named statements (\`openPostgresStore\`'s default), ${f.steps}-step run`, us(f.prepared.cairnUsPerStep), '', ''],
                ['ratio (named statements)', `${fmt(f.prepared.ratio, 2)}×`, '', ''],
                [`Cairn, named statements, ${f.inFlight} runs in flight`, us(f.prepared.cairnUsPerStepInFlight), '', ''],
                [`ratio, ${f.inFlight} in flight (named statements)`, `${fmt(f.prepared.ratioInFlight, 2)}×`, '', ''],
              ]
            : []),
        ],
      ),
    );
    if (f.series && f.series.length > 0) {
      out.push('');
      out.push(
        `Group commit (decision 60): N runs in flight against N INSERT loops (one connection each), alternating repetition by repetition; wall time per step, and commits (transaction ids) per step write beyond the runs' own writes.`,
      );
      out.push('');
      out.push(
        table(
          [
            'in flight',
            'floor',
            'Cairn named, group commit',
            'ratio',
            'Cairn unnamed, group commit',
            'ratio',
            'Cairn named, groupCommit: false',
            'ratio',
            'commits per step (group commit / off)',
          ],
          f.series.map((l) => [
            String(l.inFlight),
            us(l.floorUs),
            us(l.preparedUs),
            `${fmt(l.preparedUs / l.floorUs, 2)}×`,
            us(l.cairnUs),
            `${fmt(l.cairnUs / l.floorUs, 2)}×`,
            us(l.ungroupedUs),
            `${fmt(l.ungroupedUs / l.floorUs, 2)}×`,
            `${fmt(l.commitsPerStep.prepared, 2)} / ${fmt(l.commitsPerStep.ungrouped, 2)}`,
          ]),
        ),
      );
    }
    if (f.cpuUsPerStep) {
      out.push('');
      out.push(
        `Client CPU per step (this process, user + system, median): floor ${us(f.cpuUsPerStep.floor)} (plain \`pg\`), Cairn ${us(f.cpuUsPerStep.cairn)} unnamed, ${us(f.cpuUsPerStep.prepared)} named.`,
      );
    }
    out.push('');
  }

  const local = r.backends.filter((b) => b.localThroughput);
  if (local.length > 0 || r.processThroughput.length > 0) {
    out.push('### Queued throughput (runs/s, submit of the first → completion of the last; 3 no-op steps per run)');
    out.push('');
    const rows: string[][] = local.map((b) => {
      const t = b.localThroughput!;
      return [`local queue + ${b.title}`, '1 (in-process)', String(t.concurrency), String(t.runs), fmt(t.runsPerSecond, 0), '', '', ''];
    });
    for (const p of r.processThroughput) {
      for (const w of p.byWorkers) {
        rows.push([
          `${p.queue} + ${p.store}`,
          String(w.workers),
          String(p.concurrency),
          String(p.runs),
          fmt(w.runsPerSecond, 0),
          fmt(w.requestsPerRun, 1),
          fmt(w.netRequestsPerRun, 1),
          fmt(w.idleRequestsPerSecond, 1),
        ]);
      }
    }
    out.push(
      table(
        [
          'queue + store',
          'worker processes',
          'concurrency per worker',
          'runs',
          'runs/s',
          'server requests per run',
          'of them caused by the runs (idle cost taken out)',
          'idle requests/s',
        ],
        rows,
      ),
    );
    out.push('');
    for (const p of r.processThroughput) {
      out.push(`Most frequent server requests, ${p.queue} + ${p.store} (per run while busy; per second over ${fmt(p.idleSeconds, 0)} s idle):`);
      out.push('');
      out.push(topRequests(p.byWorkers));
      out.push('');
    }
  }

  const idle = r.backends.filter((b) => b.idle);
  if (idle.length > 0) {
    out.push(`### Idle cost per engine (counted over ${idle[0]!.idle!.passes} recovery intervals on a manual clock, nothing to do)`);
    out.push('');
    out.push(
      table(
        ['store', 'requests per recovery pass (with workers)', 'requests/s at the default 2 s', 'requests without workers'],
        idle.map((b) => [
          b.title,
          `${fmt(b.idle!.requestsPerPass, 2)}${b.driverCounted ? '' : ' store calls'}`,
          fmt(b.idle!.requestsPerSecond, 2),
          String(b.idle!.clientRequests),
        ]),
      ),
    );
    out.push('');
  }

  if ((r.storeDispatch ?? []).length > 0) {
    out.push('### Without a broker: the store is the queue between processes (local queue, client process without workers)');
    out.push('');
    const rows: string[][] = [];
    for (const d of r.storeDispatch ?? []) {
      for (const w of d.byWorkers) {
        rows.push([
          `${d.store} (${d.mechanism})`,
          String(w.workers),
          ms(w.pickupP50Ms),
          ms(w.pickupP90Ms),
          ms(w.eventP50Ms),
          fmt(w.requestsPerRun, 1),
          fmt(w.claimsPerExecution, 2),
          fmt(w.lostClaimsPerExecution, 2),
          fmt(w.idleRequestsPerSecond, 1),
        ]);
      }
    }
    out.push(
      table(
        [
          'store',
          'worker processes',
          'start → pickup p50',
          'p90',
          'event → run p50',
          'server requests per run',
          'claims per execution',
          'lost claims per execution',
          'idle requests/s (all processes)',
        ],
        rows,
      ),
    );
    out.push('');
    for (const d of r.storeDispatch ?? []) {
      out.push(
        `Most frequent server requests, ${d.store} without a broker (per run while starting ${d.runs} runs one by one; per second over ${fmt(d.idleSeconds, 0)} s idle):`,
      );
      out.push('');
      out.push(topRequests(d.byWorkers));
      out.push('');
    }
  }

  if ((r.pushedResults ?? []).length > 0) {
    out.push('### `result()` of a run executing in another process: on the completion signal, and polling (one worker process)');
    out.push('');
    const rows: string[][] = [];
    for (const p of r.pushedResults ?? []) {
      const row = (how: string, f: PushedResultsResult['pushed']) => [
        `${p.store} (${p.mechanism})`,
        how,
        ms(f.p50Ms),
        ms(f.p95Ms),
        ms(f.maxMs),
        fmt(f.readsPerResult, 2),
        fmt(f.pollingReadsPerResult, 2),
      ];
      rows.push(row(`signal, ${p.samples} one by one`, p.pushed));
      rows.push(row(`polling, ${p.samples} one by one`, p.polled));
      rows.push(row(`signal, ${p.concurrent} at once`, p.pushedConcurrent));
      rows.push(row(`polling, ${p.concurrent} at once`, p.polledConcurrent));
    }
    out.push(table(['store', 'result() waits on', 'write → result() p50', 'p95', 'max', 'reads per result()', 'polling reads per result()'], rows));
    out.push('');
  }

  if (r.fairness.length > 0) {
    out.push(
      `### Fairness with \`shared-groups\` (one group submits ${fmt(r.fairness[0]!.bigRuns / r.fairness[0]!.smallRuns, 0)}× the runs of the other, first)`,
    );
    out.push('');
    out.push(
      table(
        [
          'queue + store',
          'big / small runs',
          'concurrency / per group',
          'first claim',
          'small group worst wait',
          'big group worst wait',
          'run time (median)',
          'all done',
        ],
        r.fairness.map((f) => [
          `${f.queue} + ${f.store}`,
          `${f.bigRuns} / ${f.smallRuns}`,
          `${f.concurrency} / ${f.groupConcurrency}`,
          ms(f.firstClaimMs),
          ms(f.smallWorstWaitMs),
          ms(f.bigWorstWaitMs),
          ms(f.medianRunMs),
          ms(f.totalMs),
        ]),
      ),
    );
    out.push('');
  }

  const withCheck = r.backends.filter((b) => b.check);
  if (withCheck.length > 0) {
    out.push(checkSection(withCheck, r.mode));
  }

  if (r.observability) {
    const o = r.observability;
    out.push(`### Observability overhead (memory store, ${o.runs} inline runs of ${o.stepsPerRun} no-op steps, median of ${o.reps} interleaved repetitions)`);
    out.push('');
    out.push(
      table(
        ['lifecycle events', 'µs per step', 'ratio to none'],
        o.variants.map((v) => [v.name, fmt(v.microsPerStep, 2), `${fmt(v.ratio, 3)}×`]),
      ),
    );
    out.push('');
    out.push(
      `With nobody listening the engine makes ${fmt(o.checksPerStep, 2)} "does anyone listen?" checks per step at ${fmt(o.checkNanos, 1)} ns each: ${fmt(o.idleOverheadPercent, 3)} % of a step (target ≤ 2 %).`,
    );
    out.push('');
  }

  out.push('### Targets');
  out.push('');
  out.push(
    table(
      ['target', 'backend', 'measured', 'holds'],
      r.targets.map((t) => [t.target, t.subject, t.measured, `${t.holds ? 'yes' : '**no**'}${t.enforced ? '' : ' (reported)'}`]),
    ),
  );
  out.push('');
  if (r.skipped.length > 0) {
    out.push('Not measured:');
    for (const s of r.skipped) out.push(`- ${s.title}: ${s.reason}`);
    out.push('');
  }
  const errors = [...r.errors, ...r.backends.flatMap((b) => b.errors.map((e) => ({ ...e, scenario: `${b.title}: ${e.scenario}` })))];
  if (errors.length > 0) {
    out.push('Errors:');
    for (const e of errors) out.push(`- ${e.scenario}: ${e.message}`);
    out.push('');
  }
  for (const b of r.backends) for (const i of b.incidents) out.push(`- ${b.title}: ${i}`);
  for (const note of r.notes) out.push(`- ${note}`);
  out.push('');
  out.push(`Total bench time: ${ms(r.durationMs)}.`);
  return out.join('\n');
}

/** The most frequent server requests per worker count: per run while busy, per second while idle. */
function topRequests(
  rounds: readonly { workers: number; topPerRun: { request: string; perRun: number }[]; idleTop: { request: string; perSecond: number }[] }[],
): string {
  const code = (request: string) => `\`${request.replace(/`/g, "'").replace(/\|/g, '\\|')}\``;
  const top: string[][] = [];
  for (const w of rounds) {
    for (const t of w.topPerRun.slice(0, 5)) top.push([String(w.workers), 'busy', code(t.request), `${fmt(t.perRun, 2)}/run`]);
    for (const t of w.idleTop.slice(0, 3)) top.push([String(w.workers), 'idle', code(t.request), `${fmt(t.perSecond, 1)}/s`]);
  }
  return table(['workers', 'window', 'request', 'count'], top);
}

/** The pre-deploy check: time, where it goes, and memory, per backend and size. */
function checkSection(backends: readonly BackendReport[], mode: 'full' | 'smoke'): string {
  const out: string[] = [];
  const c0 = backends[0]!.check!;
  const reps = c0.sizes[0]?.samplesMs?.length;
  const tuning = `pageSize ${c0.pageSize ?? '200 (default)'}, concurrency ${c0.concurrency ?? '8 (default)'}`;
  out.push(
    `### Pre-deploy check: \`checkWorkflowCode\` over in-flight runs of ${c0.steps} recorded steps (${tuning}; median of ${reps ?? '?'}${mode === 'smoke' ? ', smoke sizes' : ''})`,
  );
  out.push('');
  const secs = (value: number | undefined) => (value === undefined ? '–' : ms(value));
  const rows: string[][] = [];
  for (const b of backends) {
    const c = b.check!;
    for (const s of c.sizes) {
      const last = s === c.sizes[c.sizes.length - 1];
      rows.push([
        b.title,
        fmt(s.runs, 0),
        ms(s.wallMs),
        fmt(s.runsPerSecond, 0),
        secs(s.cpuMs),
        secs(s.serverCpuMs),
        `${ms(s.readsOnlyMs)} (CPU ${ms(s.readsOnlyCpuMs)}${s.readsOnlyServerCpuMs === undefined ? '' : ` + server ${ms(s.readsOnlyServerCpuMs)}`})`,
        last ? `${ms(c.diverging.wallMs)} (${fmt(c.diverging.runsPerSecond, 0)} runs/s, CPU ${ms(c.diverging.cpuMs)})` : '',
      ]);
    }
  }
  out.push(
    table(
      ['backend', 'runs', 'check: wall', 'runs/s', 'bench process CPU', 'server CPU', 'reads alone: wall', 'diverging build (step inserted halfway): wall'],
      rows,
    ),
  );
  out.push('');
  out.push(
    table(
      ['backend', 'how filled', 'round trips per run', 'replay alone (CPU per run / per step row)'],
      backends.map((b) => {
        const c = b.check!;
        return [
          b.title,
          c.populatedBy === 'sql-clone'
            ? `one run through the engine, cloned with INSERT … SELECT (${c.stepRows} step rows each)`
            : `every run through the engine (${c.stepRows} step rows each)`,
          fmt(c.roundTripsPerRun, 3),
          `${us(c.replayCpuUsPerRun)} / ${us(c.replayCpuUsPerStep)}`,
        ];
      }),
    ),
  );
  out.push('');
  out.push('Memory of the bench process during the check (MiB above the level just before it, after a full GC):');
  out.push('');
  const mem: string[][] = [];
  for (const b of backends) {
    for (const s of b.check!.sizes) {
      mem.push([b.title, fmt(s.runs, 0), fmt(s.peakRssGrowthMiB, 1), fmt(s.peakHeapGrowthMiB, 1), fmt(s.streamedLiveHeapMiB, 2), fmt(s.reportHeapMiB, 2)]);
    }
  }
  out.push(
    table(
      [
        'backend',
        'runs',
        'peak RSS growth',
        'peak heap growth (garbage included)',
        'live heap, streamed `checkRuns` (GC every 100 verdicts)',
        "`checkWorkflowCode`'s report (every verdict)",
      ],
      mem,
    ),
  );
  out.push('');
  out.push(
    "Wall: `checkWorkflowCode` from the call to the report, every verdict asserted (`compatible`; the diverging build: `diverges`). CPU: the bench process (replay, driver, GC) and, on PostgreSQL, the server's processes. Reads alone: the same `runs.list` pages and `runs.get` + `steps.load` per run at the same concurrency, without the replay. Replay alone: one exported history replayed again and again in memory. Peak RSS and heap are sampled every 10 ms and include garbage V8 has not collected yet; the streamed live heap is what memory the check keeps.",
  );
  out.push('');
  return out.join('\n');
}
