import type { IncomingMessage } from 'node:http';
import { CairnError, type Engine, type Json } from '@cairn/core';
import { approve, GraphError } from '@cairn/graph';
import { parseRunFilters } from './run-filters.js';
import { overview } from './overview.js';
import { runView } from './run-view.js';
import { answerBulk } from './bulk-route.js';

/** An API answer: a status and a JSON body. */
export interface ApiAnswer {
  status: number;
  body: Json | object;
}

// Action bodies are a reason or a step key: a few KiB at most.
const MAX_BODY_BYTES = 64 * 1024;
const RUN_PATH = /^\/api\/runs\/([^/]+)$/;
const STREAMS_PATH = /^\/api\/runs\/([^/]+)\/streams$/;
const APPROVE_PATH = /^\/api\/runs\/([^/]+)\/approve$/;
const ACTION_PATH = /^\/api\/runs\/([^/]+)\/(cancel|pause|resume|retry|fork)$/;

const STATUS_OF_CODE: Partial<Record<string, number>> = {
  INVALID_INPUT: 400,
  RUN_NOT_FOUND: 404,
  STEP_NOT_FOUND: 404,
  WORKFLOW_NOT_FOUND: 404,
  VERSION_NOT_FOUND: 404,
  NOT_SERIALIZABLE: 400,
  PAYLOAD_TOO_LARGE: 413,
  STREAM_NOT_FOUND: 404,
  STREAM_RANGE: 400,
  STREAM_UNSUPPORTED: 501,
  BULK_UNSUPPORTED: 501,
  TAGS_UNSUPPORTED: 501,
  BULK_NOT_FOUND: 404,
  TAG_LIMIT: 400,
};

async function readJsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new CairnError('PAYLOAD_TOO_LARGE', `the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown;
  try {
    body = text.length === 0 ? {} : JSON.parse(text);
  } catch {
    throw new CairnError('INVALID_INPUT', 'the request body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new CairnError('INVALID_INPUT', 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

export const decodeRunId = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new CairnError('INVALID_INPUT', 'the run id in the path is not valid percent-encoding');
  }
};

const optionalString = (body: Record<string, unknown>, name: string): string | undefined => {
  const value = body[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new CairnError('INVALID_INPUT', `${name} must be a string`);
  return value;
};

async function act(engine: Engine, runId: string, action: string, body: Record<string, unknown>): Promise<ApiAnswer> {
  const reason = optionalString(body, 'reason');
  if (action === 'cancel') {
    await engine.cancel(runId, reason === undefined ? {} : { reason });
    return { status: 200, body: { ok: true } };
  }
  if (action === 'pause') {
    const { changed } = await engine.pause(runId, reason === undefined ? {} : { reason });
    return { status: 200, body: { ok: true, changed } };
  }
  if (action === 'resume') {
    const { changed } = await engine.resume(runId);
    return { status: 200, body: { ok: true, changed } };
  }
  if (action === 'retry') {
    await engine.retryRun(runId, reason === undefined ? {} : { reason });
    return { status: 200, body: { ok: true } };
  }
  const fromStep = optionalString(body, 'fromStep');
  if (fromStep === undefined) throw new CairnError('INVALID_INPUT', 'fromStep is required');
  const handle = await engine.forkRun(runId, { fromStep });
  return { status: 200, body: { ok: true, runId: handle.id } };
}

const STATUS_OF_GRAPH_CODE: Partial<Record<string, number>> = { APPROVAL_INVALID: 400, APPROVAL_FORBIDDEN: 403 };

/** Answers an approval gate (`approve` of `@cairn/graph`): `{ node, by, decision, payload? }`. */
async function answerGate(engine: Engine, runId: string, body: Record<string, unknown>): Promise<ApiAnswer> {
  const node = optionalString(body, 'node');
  if (node === undefined) throw new CairnError('INVALID_INPUT', 'node is required');
  try {
    const answer = { by: body.by, decision: body.decision, ...(body.payload === undefined ? {} : { payload: body.payload }) } as Parameters<typeof approve>[3];
    await approve(engine, runId, node, answer);
  } catch (error) {
    if (GraphError.is(error)) return { status: STATUS_OF_GRAPH_CODE[error.code] ?? 409, body: { error: { code: error.code, message: error.message } } };
    throw error;
  }
  return { status: 200, body: { ok: true } };
}

/** Turns an error into an answer: a Cairn error keeps its code and message, anything else is a 500 that says no more. */
export function errorAnswer(error: unknown): ApiAnswer {
  if (CairnError.is(error)) return { status: STATUS_OF_CODE[error.code] ?? 409, body: { error: { code: error.code, message: error.message } } };
  return { status: 500, body: { error: { code: 'INTERNAL', message: 'The dashboard failed to answer; see the server log.' } } };
}

/**
 * The JSON API the pages use:
 * - `GET /api/overview`: the home page's figures (`Overview`: the last day per workflow, failures by
 *   code, the backlog), from `listRuns` alone;
 * - `GET /api/runs?filters`: a page of `listRuns` (`{ runs, nextCursor? }`: summaries, no payloads);
 * - `GET /api/runs/:id`: the run page (`RunView`), 404 when there is no such run;
 * - `GET /api/runs/:id/streams`: the run's streams (`{ streams }`: name, length, closed);
 * - `POST /api/runs/:id/cancel|pause|resume|retry|fork`: the actions (`{ reason? }`, `{ fromStep }`;
 *   pause and resume answer `{ ok, changed }`);
 * - `POST /api/runs/:id/approve`: answers an approval gate of a graph run (`{ node, by, decision, payload? }`);
 * - `POST /api/bulk`: one bulk operation over selected runs or a filter (`{ action, runIds?, filter?, reason?, dryRun? }`).
 * Answers `undefined` for a path it does not know.
 */
export async function answerApi(engine: Engine, request: IncomingMessage, url: URL): Promise<ApiAnswer | undefined> {
  const path = url.pathname;
  try {
    if (request.method === 'POST' && APPROVE_PATH.test(path)) {
      return await answerGate(engine, decodeRunId((APPROVE_PATH.exec(path) as RegExpExecArray)[1] as string), await readJsonBody(request));
    }
    if (request.method === 'POST' && path === '/api/bulk') return await answerBulk(engine, await readJsonBody(request));
    if (request.method === 'POST') {
      const m = ACTION_PATH.exec(path);
      if (!m) return undefined;
      const body = await readJsonBody(request);
      return await act(engine, decodeRunId(m[1] as string), m[2] as string, body);
    }
    if (path === '/api/overview') return { status: 200, body: await overview(engine) };
    if (path === '/api/runs') {
      const page = await engine.listRuns(parseRunFilters(url.searchParams));
      return { status: 200, body: page };
    }
    const streams = STREAMS_PATH.exec(path);
    if (streams) return { status: 200, body: { streams: await engine.listStreams(decodeRunId(streams[1] as string)) } };
    const m = RUN_PATH.exec(path);
    if (!m) return undefined;
    const view = await runView(engine, decodeRunId(m[1] as string));
    return view ? { status: 200, body: view } : { status: 404, body: { error: { code: 'RUN_NOT_FOUND', message: 'No such run.' } } };
  } catch (error) {
    return errorAnswer(error);
  }
}
