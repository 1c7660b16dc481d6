// Runs in every status on a real engine, for the browser tests: a completed invoice, a failed
// charge (its step failed three attempts), approvals waiting for an event (one cancelled, one
// answered), a nightly report asleep, a batch import whose step is still running, and an order
// waiting on its child.
import { createEngine, defineWorkflow, type Engine, type RunStatus } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';

/** A promise the test resolves: holds the import's step body running. */
function latch(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** The runs the scenario made, by role. */
export interface SeededRuns {
  completed: string;
  failed: string;
  cancelled: string;
  waitingEvent: string;
  answered: string;
  sleeping: string;
  running: string;
  parent: string;
  child: string;
}

/** A started engine with the scenario's runs, and the switches the tests flip. */
export interface Scenario {
  engine: Engine;
  runs: SeededRuns;
  /** While true, `reserve-funds` throws "card declined"; once `drifted`, `sign-up` inserts a step before its first (a deploy that changed its code). */
  control: { declines: boolean; drifted: boolean };
  /** Releases the running import and stops the engine. */
  stop(): Promise<void>;
}

/** Polls `check` until it holds (every 20 ms, at most `ms`). */
export async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until run `id` has `status`. */
export const untilStatus = (engine: Engine, id: string, status: RunStatus) =>
  until(async () => (await engine.getRun(id))?.status === status, `run ${id} to be ${status}`);

/** Starts an engine on `store` and makes the scenario's runs, each settled in its status. */
export async function seedRuns(store: WorkflowStore): Promise<Scenario> {
  const control = { declines: true, drifted: false };
  const importing = latch();

  const sendInvoice = defineWorkflow('send-invoice', async (ctx, input: { order: string; amount: number }) => {
    const order = await ctx.step('load-order', () => ({ order: input.order, lines: 3, amount: input.amount }));
    const pdf = await ctx.step('render-pdf', () => ({ file: `invoice-${order.order}.pdf`, pages: 2 }));
    await ctx.setState('invoice', { file: pdf.file, sent: false });
    await ctx.step('email-customer', () => ({ to: 'dana@example.com', messageId: 'msg-7781' }));
    await ctx.setState('invoice', { file: pdf.file, sent: true });
    return { sent: true, file: pdf.file };
  });
  const chargeCard = defineWorkflow('charge-card', async (ctx, input: { order: string; amount: number }) => {
    await ctx.step('validate-card', () => ({ ok: true, last4: '4242' }));
    const hold = await ctx.step(
      'reserve-funds',
      () => {
        if (control.declines) throw new Error('card declined by issuer (insufficient funds)');
        return { holdId: `hold-${input.order}`, amount: input.amount };
      },
      { retries: 2, backoff: { type: 'fixed', delay: 10 } },
    );
    await ctx.step('capture', () => ({ captured: hold.amount }));
    return { charged: input.amount };
  });
  const awaitApproval = defineWorkflow('await-approval', async (ctx, input: { request: string }) => {
    await ctx.step('request-approval', () => ({ request: input.request, notified: ['ops-lead'] }));
    const answer = await ctx.waitForEvent<{ approvedBy: string }>('approval');
    await ctx.step('apply-change', () => ({ applied: input.request, by: answer.approvedBy }));
    return answer;
  });
  const nightlyReport = defineWorkflow('nightly-report', async (ctx) => {
    await ctx.step('collect-metrics', () => ({ rows: 1280 }));
    await ctx.sleep('until-morning', '8h');
    return await ctx.step('publish', () => 'published');
  });
  const importBatch = defineWorkflow('import-batch', async (ctx, input: { batch: number }) => {
    await ctx.step('fetch-rows', () => ({ rows: 500, batch: input.batch }));
    await ctx.step('write-rows', async () => {
      await importing.wait;
      return { written: 500 };
    });
    return 'imported';
  });
  const shipParcel = defineWorkflow('ship-parcel', async (ctx, input: { order: string }) => {
    await ctx.step('book-courier', () => ({ courier: 'DHL', order: input.order }));
    await ctx.sleep('await-pickup', '2h');
    return 'shipped';
  });
  const fulfilOrder = defineWorkflow('fulfil-order', async (ctx, input: { order: string }) => {
    await ctx.step('pick-items', () => ({ items: 3 }));
    return await ctx.child(shipParcel, { order: input.order });
  });

  // Started by the test of divergences only (the runs table tests count the runs above).
  const signUp = defineWorkflow('sign-up', async (ctx, input: { email: string }) => {
    const email = control.drifted ? await ctx.step('normalise email', () => input.email.toLowerCase()) : input.email;
    await ctx.step('create account', () => ({ account: `acct:${email}` }));
    return await ctx.waitForEvent<{ ok: boolean }>('confirmed');
  });

  const engine = createEngine({
    store,
    workflows: [sendInvoice, chargeCard, awaitApproval, nightlyReport, importBatch, shipParcel, fulfilOrder, signUp],
    // `control.drifted` changes `sign-up`'s code inside this process, where a real deploy restarts
    // it: a kept execution (decision 64) would resume the suspended run without replaying the new
    // code, so every wake here replays, as the first wake after a deploy does.
    stickyExecutions: false,
    logger: { warn: () => {}, error: (data, message) => console.error(`[cairn] ${message}`, data) },
  });
  await engine.start();

  const completed = (await engine.startRun(sendInvoice, { order: 'A-1001', amount: 129 }, { tags: { customer: 'c-42', plan: 'pro' } })).id;
  const failed = (await engine.startRun(chargeCard, { order: 'A-1002', amount: 54 }, { tags: { customer: 'c-42', 'x<b>': '<img src=x onerror=alert(1)>' } }))
    .id;
  const cancelled = (await engine.startRun(awaitApproval, { request: 'raise limit for A-1003' })).id;
  const waitingEvent = (await engine.startRun(awaitApproval, { request: 'refund A-1004' })).id;
  const answered = (await engine.startRun(awaitApproval, { request: 'discount A-1005' })).id;
  const sleeping = (await engine.startRun(nightlyReport, {})).id;
  const running = (await engine.startRun(importBatch, { batch: 7 })).id;
  const parent = (await engine.startRun(fulfilOrder, { order: 'A-1042' }, { idempotencyKey: 'order-A-1042' })).id;

  await untilStatus(engine, completed, 'completed');
  await untilStatus(engine, failed, 'failed');
  for (const id of [cancelled, waitingEvent, answered, sleeping, parent]) await untilStatus(engine, id, 'waiting');
  await engine.cancel(cancelled, { reason: 'request withdrawn' });
  await untilStatus(engine, cancelled, 'cancelled');
  await engine.sendEvent(answered, 'approval', { approvedBy: 'dana' });
  await untilStatus(engine, answered, 'completed');
  await untilStatus(engine, running, 'running');
  await until(async () => (await engine.steps(running)).some((s) => s.key === 'write-rows' && s.status === 'running'), 'write-rows to run');
  const childStep = (await engine.steps(parent)).find((s) => s.kind === 'child');
  if (!childStep?.childRunId) throw new Error('the parent recorded no child');
  const child = childStep.childRunId;
  await untilStatus(engine, child, 'waiting');

  return {
    engine,
    runs: { completed, failed, cancelled, waitingEvent, answered, sleeping, running, parent, child },
    control,
    async stop() {
      importing.open();
      await engine.stop({ graceMs: 5_000 });
    },
  };
}
