import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { CairnError, type Engine } from '@cairn/core';

/** What the server counts, for tests and health pages. */
export interface SseServer {
  readonly server: Server;
  /** Readers open now (each an SSE client); 0 once every client has gone. */
  readonly openReaders: () => number;
}

// Typed engine errors as HTTP statuses: the client's mistake or a missing run/stream.
function statusOf(error: unknown): number {
  if (CairnError.is(error, 'RUN_NOT_FOUND') || CairnError.is(error, 'STREAM_NOT_FOUND')) return 404;
  if (CairnError.is(error, 'INVALID_INPUT') || CairnError.is(error, 'STREAM_RANGE')) return 400;
  return 500;
}

/**
 * `from`: the chunk after the client's `Last-Event-ID` (each event's id is its chunk index, so a
 * browser's `EventSource` resumes by itself), else `?from=`, else 0.
 */
function fromOf(req: IncomingMessage, url: URL): number {
  const last = req.headers['last-event-id'];
  if (typeof last === 'string' && /^\d+$/.test(last)) return Number(last) + 1;
  const from = url.searchParams.get('from');
  return from !== null && /^\d+$/.test(from) ? Number(from) : 0;
}

async function streamRun(engine: Engine, req: IncomingMessage, res: ServerResponse, runId: string, name: string, counter: { open: number }): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  // The client going away aborts the reader: its listener and timer go with it.
  const gone = new AbortController();
  res.on('close', () => gone.abort(new Error('client disconnected')));
  const chunks = engine.readStream(runId, name, { from: fromOf(req, url), signal: gone.signal })[Symbol.asyncIterator]();
  counter.open += 1;
  try {
    // The first chunk (or error) decides the status: a bad request gets a plain HTTP error.
    let next: IteratorResult<{ index: number; data: unknown }>;
    try {
      next = await chunks.next();
    } catch (error) {
      res.writeHead(statusOf(error), { 'content-type': 'application/json' }).end(JSON.stringify({ error: (error as Error).message }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    while (!next.done) {
      res.write(`id: ${next.value.index}\ndata: ${JSON.stringify(next.value.data)}\n\n`);
      next = await chunks.next();
    }
    // The stream is closed (or the run ended): say so, so the browser does not reconnect.
    res.end('event: end\ndata: {}\n\n');
  } catch (error) {
    if (!gone.signal.aborted) res.end(`event: error\ndata: ${JSON.stringify({ error: (error as Error).message })}\n\n`);
  } finally {
    counter.open -= 1;
    await chunks.return?.();
  }
}

/**
 * A Node `http` server over `engine`: `GET /runs/<id>/streams/<name>` proxies the run's stream as
 * server-sent events (`id` = chunk index, `data` = the chunk's JSON), resuming after
 * `Last-Event-ID`; `event: end` when the stream is closed or the run ended.
 */
export function createSseServer(engine: Engine): SseServer {
  const counter = { open: 0 };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/runs\/([^/]+)\/streams\/([^/]+)$/.exec(url.pathname);
    if (req.method !== 'GET' || !match) {
      res.writeHead(404).end();
      return;
    }
    void streamRun(engine, req, res, decodeURIComponent(match[1] as string), decodeURIComponent(match[2] as string), counter);
  });
  return { server, openReaders: () => counter.open };
}
