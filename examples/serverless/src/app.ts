// The application as a serverless platform would run it: an engine that is never started (no
// worker, no recovery loop) and the push handler, plus two routes of the app's own that start an
// order and read it. `node-server.ts` hosts it on plain node:http, `hono-app.ts` mounts the same
// handler in Hono.
import { createEngine, type Engine } from '@cairn/core';
import type { WorkflowStore } from '@cairn/core/backend';
import { createHttpHandler, type FetchHandler } from '@cairn/http';
import { order } from './workflows.js';

/** What both hostings serve. */
export interface ServerlessApp {
  engine: Engine;
  /** The push handler: mount it at `/api/cairn` (any path: the pusher is told the URL). */
  handler: FetchHandler;
  /** `POST /orders` with `{ orderId, items }`: starts an order run; answers `{ id }`. */
  startOrder(input: { orderId: string; items: number }): Promise<{ id: string }>;
  /** `GET /orders/<id>`: the run's status and, once it completed, its output. */
  readOrder(id: string): Promise<{ status: string; output?: unknown } | undefined>;
}

export function createServerlessApp(store: WorkflowStore, options: { secret: string; maxDurationMs?: number }): ServerlessApp {
  const engine = createEngine({ store, workflows: [order] }); // never started: the pushes run the work
  const handler = createHttpHandler(engine, { secrets: options.secret, maxDurationMs: options.maxDurationMs ?? 10_000 });
  return {
    engine,
    handler,
    startOrder: async (input) => ({ id: (await engine.startRun(order, input)).id }),
    async readOrder(id) {
      const run = await engine.getRun(id);
      if (run === undefined) return undefined;
      return run.status === 'completed' ? { status: run.status, output: run.output } : { status: run.status };
    },
  };
}
