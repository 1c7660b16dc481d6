import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AccessControl } from './access-control.js';
import { answerApi, decodeRunId, errorAnswer } from './api-routes.js';
import { checkDashboardOptions, type DashboardOptions } from './dashboard-options.js';
import { loadStaticFiles, type StaticFile } from './static-files.js';
import { STREAM_EVENTS_PATH, serveStreamEvents } from './stream-events.js';

/** A running dashboard. */
export interface Dashboard {
  /**
   * Where to open it: `http://HOST:PORT/`, with `?token=…` when a token is set (opening it once
   * sets the cookie that carries the token from then on).
   */
  readonly url: string;
  /** Stops listening and closes open connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * The Content-Security-Policy of every answer: scripts, styles and connections from this origin
 * only, no inline script or style, no plugins, frames or forms elsewhere, and Trusted Types
 * required, so even a stray `innerHTML = string` in the dashboard's own scripts would throw.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  'trusted-types',
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

function send(response: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, ...extra });
  response.end(body);
}

const sendJson = (response: ServerResponse, status: number, body: unknown) => send(response, status, 'application/json; charset=utf-8', JSON.stringify(body));

function pageFor(files: Map<string, StaticFile>, path: string): StaticFile | undefined {
  if (/^\/runs\/[^/]+$/.test(path)) return files.get('/runs/');
  return files.get(path);
}

/**
 * Starts the dashboard: an HTTP server (node:http) serving the overview at `/` (and `/overview`), the runs table at `/runs`, a run page at
 * `/runs/<id>`, their scripts under `/assets/`, and the JSON API under `/api/` (see
 * `answerApi`). Binds to 127.0.0.1 unless told otherwise; a non-loopback host needs
 * `allowRemote: true` and a token (`INVALID_INPUT` otherwise, before anything listens). Every
 * request passes `AccessControl` (host, token, CSRF); every answer carries a strict
 * Content-Security-Policy; the pages render run data with `textContent` only. Rejects when the
 * port cannot be bound.
 */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const checked = checkDashboardOptions(options);
  const files = loadStaticFiles();
  let access: AccessControl | undefined;

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://dashboard.invalid');
    const decision = (access as AccessControl).decide(request, url);
    if (decision.kind === 'deny') {
      if (url.pathname.startsWith('/api/')) return sendJson(response, decision.status, { error: { code: 'ACCESS_DENIED', message: decision.message } });
      return send(response, decision.status, 'text/plain; charset=utf-8', decision.message);
    }
    if (decision.kind === 'set-cookie')
      return send(response, 303, 'text/plain; charset=utf-8', '', { location: decision.location, 'set-cookie': decision.cookie });
    const streamEvents = request.method === 'GET' ? STREAM_EVENTS_PATH.exec(url.pathname) : null;
    if (streamEvents) {
      let path: { runId: string; name: string };
      try {
        path = { runId: decodeRunId(streamEvents[1] as string), name: decodeRunId(streamEvents[2] as string) };
      } catch (error) {
        const answer = errorAnswer(error);
        return sendJson(response, answer.status, answer.body);
      }
      return serveStreamEvents(checked.engine, request, response, url, path, SECURITY_HEADERS);
    }
    if (url.pathname.startsWith('/api/')) {
      const answer = await answerApi(checked.engine, request, url);
      if (answer) return sendJson(response, answer.status, answer.body);
      return sendJson(response, 404, { error: { code: 'NOT_FOUND', message: 'No such API path.' } });
    }
    const file = request.method === 'GET' || request.method === 'HEAD' ? pageFor(files, url.pathname) : undefined;
    if (!file) return send(response, 404, 'text/plain; charset=utf-8', 'Not found.');
    return send(response, 200, file.type, request.method === 'HEAD' ? '' : file.body);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) sendJson(response, 500, { error: { code: 'INTERNAL', message: 'The dashboard failed to answer.' } });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(checked.port, checked.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  access = new AccessControl({ token: checked.token, loopback: checked.loopback, host: checked.host, port });
  const hostInUrl = checked.host.includes(':') ? `[${checked.host}]` : checked.host;
  const url = `http://${hostInUrl}:${port}/${checked.token === undefined ? '' : `?token=${encodeURIComponent(checked.token)}`}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
