import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from '@cairn/core';
import { errorAnswer } from './api-routes.js';

/** `GET /api/runs/<id>/streams/<name>/events`: the path of a run stream's server-sent events. */
export const STREAM_EVENTS_PATH = /^\/api\/runs\/([^/]+)\/streams\/([^/]+)\/events$/;

/**
 * Serves one run stream as server-sent events: each chunk an event whose `id` is its index and
 * whose `data` is its JSON, from the chunk after `Last-Event-ID` (an `EventSource` reconnecting)
 * or `?from=`, then `event: end` when the stream is closed or the run ended. A bad request (no
 * such run, `from` past the end) is a JSON error with its status before any event. The client
 * going away aborts the reader (`engine.readStream`'s signal): nothing is left behind.
 */
export async function serveStreamEvents(
  engine: Engine,
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  path: { runId: string; name: string },
  headers: Record<string, string>,
): Promise<void> {
  const last = request.headers['last-event-id'];
  const fromParam = url.searchParams.get('from');
  const from =
    typeof last === 'string' && /^\d{1,15}$/.test(last) ? Number(last) + 1 : fromParam !== null && /^\d{1,15}$/.test(fromParam) ? Number(fromParam) : 0;
  const gone = new AbortController();
  response.on('close', () => gone.abort(new Error('the client went away')));
  let chunks: AsyncIterator<{ index: number; data: unknown }>;
  let next: IteratorResult<{ index: number; data: unknown }>;
  try {
    chunks = engine.readStream(path.runId, path.name, { from, signal: gone.signal })[Symbol.asyncIterator]();
    next = await chunks.next();
  } catch (error) {
    const answer = errorAnswer(error);
    response.writeHead(answer.status, { ...headers, 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(answer.body));
    return;
  }
  response.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
  try {
    while (!next.done) {
      // JSON.stringify never writes a raw newline, so one `data:` line carries the whole chunk.
      response.write(`id: ${next.value.index}\ndata: ${JSON.stringify(next.value.data)}\n\n`);
      next = await chunks.next();
    }
    response.end('event: end\ndata: {}\n\n');
  } catch (error) {
    if (!gone.signal.aborted) response.end(`event: failure\ndata: ${JSON.stringify(errorAnswer(error).body)}\n\n`);
  } finally {
    await chunks.return?.();
  }
}
