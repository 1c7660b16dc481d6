// The push handler: a Fetch-API function `(request) => Promise<Response>` that authenticates a
// push, then executes the one unit of work it names within its budget (see docs/serverless.md).
// Every refusal — method, content type, size, signature, timestamp, body — happens before the
// engine, and so the store, is touched.
import { CairnError, type Engine } from '@cairn/core';
import { type HttpHandlerOptions, checkHandlerOptions } from './http-handler-options.js';
import { BadPush, type NextPush, type PushAnswer, type PushUnit, parsePushUnit, stepPushes } from './push-unit.js';
import { verifyPush } from './push-signature.js';
import { readLimitedBody } from './read-limited-body.js';

/** A Fetch-API request handler (Hono, Next.js route handlers, Deno, Bun, Cloudflare take it as is). */
export type FetchHandler = (request: Request) => Promise<Response>;

// How many due runs a tick reads at a time.
const TICK_BATCH = 20;

function answer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } });
}

function refuse(status: number, error: string): Response {
  return answer(status, { error });
}

/**
 * Makes the push handler of `engine` (an engine that need not be started: it runs no worker).
 * It accepts only `POST` requests with a JSON body of at most `maxBodyBytes`, signed with one of
 * `secrets` at a timestamp within `toleranceMs` (see `signPush`), and answers:
 * - 405 (another method), 415 (another content type), 413 (too large), 401 (no signature, a wrong
 *   one — a body changed in flight has one — or a timestamp out of the window), 400 (a body that
 *   names no unit of work): nothing read or written;
 * - 200 with a `PushAnswer` once the unit ran (a duplicate push answers `skipped`);
 * - 503 when the store failed, 500 for anything else (the pusher retries both).
 * A unit of work starts no primitive after `maxDurationMs - reserveMs` from the request's arrival.
 */
export function createHttpHandler(engine: Engine, options: HttpHandlerOptions): FetchHandler {
  const checked = checkHandlerOptions(options);
  const { secrets, toleranceMs, maxBodyBytes, onError } = checked;

  const runOnce = async (runId: string, deadline: number): Promise<PushAnswer> => {
    const result = await engine.pushed.executeOnce(runId, { deadline });
    const next: NextPush[] = stepPushes(result.steps);
    if (result.status === 'continue') next.unshift({ kind: 'run', runId });
    return { kind: 'run', status: result.status, runId, ...(result.wakeAt === undefined ? {} : { wakeAt: result.wakeAt }), next };
  };

  const runStep = async (unit: Extract<PushUnit, { kind: 'step' }>): Promise<PushAnswer> => {
    const { steps } = await engine.pushed.executeStep(unit.job);
    // The step's result woke its run: push the run next (a duplicate is harmless: it claims nothing).
    return { kind: 'step', status: 'done', runId: unit.job.runId, next: [{ kind: 'run', runId: unit.job.runId }, ...stepPushes(steps)] };
  };

  const tick = async (deadline: number): Promise<PushAnswer> => {
    let executed = 0;
    const seen = new Set<string>();
    while (Date.now() < deadline) {
      const due = (await engine.pushed.dueRuns(TICK_BATCH)).filter((run) => !seen.has(run.id));
      if (due.length === 0) return { kind: 'tick', status: 'idle', executed, next: [] };
      for (const run of due) {
        if (Date.now() >= deadline) break;
        const result = await engine.pushed.executeOnce(run.id, { deadline });
        if (result.status !== 'skipped') executed++;
        // Due again at once only when the budget stopped it: then the loop ends anyway.
        if (result.status !== 'continue') seen.add(run.id);
        // Queued steps run here too while the budget lasts; one left over is dispatched again by
        // its run's replay after the dispatch timeout, and a later tick runs it.
        for (const step of result.steps) if (step.delayMs === undefined && Date.now() < deadline) await engine.pushed.executeStep(step.job);
      }
    }
    return { kind: 'tick', status: 'continue', executed, next: [] };
  };

  return async (request) => {
    const arrived = Date.now();
    if (request.method !== 'POST') return refuse(405, 'only POST is accepted');
    const type = request.headers.get('content-type') ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) return refuse(415, 'the body must be application/json');
    const body = await readLimitedBody(request, maxBodyBytes);
    if (body === undefined) return refuse(413, `the body is larger than ${maxBodyBytes} bytes`);
    const refusal = verifyPush(request.headers, body, secrets, toleranceMs, arrived);
    if (refusal !== undefined) return refuse(401, refusal);
    let unit: PushUnit;
    try {
      unit = parsePushUnit(new TextDecoder('utf-8', { fatal: true }).decode(body));
    } catch (error) {
      return refuse(400, error instanceof BadPush ? error.message : 'the body is not UTF-8');
    }
    const deadline = arrived + checked.maxDurationMs - checked.reserveMs;
    try {
      if (unit.kind === 'run') return answer(200, await runOnce(unit.runId, deadline));
      if (unit.kind === 'step') return answer(200, await runStep(unit));
      return answer(200, await tick(deadline));
    } catch (error) {
      if (CairnError.is(error, 'INVALID_INPUT')) return refuse(400, error.message);
      onError(error);
      return refuse(CairnError.is(error, 'STORE_ERROR') ? 503 : 500, 'the push failed; push it again');
    }
  };
}
