// The app on Node's own http server: the push handler at /api/cairn through `toNodeListener`, and
// the app's order routes written with plain node:http.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { toNodeListener } from '@cairn/http';
import type { ServerlessApp } from './app.js';

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text);
}

export function createNodeServer(app: ServerlessApp): Server {
  const push = toNodeListener(app.handler);
  return createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    if (pathname === '/api/cairn') return push(req, res);
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      if (req.method === 'POST' && pathname === '/orders') return reply(201, await app.startOrder((await readJson(req)) as { orderId: string; items: number }));
      const match = /^\/orders\/([\w-]+)$/.exec(pathname);
      if (req.method === 'GET' && match) {
        const found = await app.readOrder(match[1] as string);
        return found === undefined ? reply(404, { error: 'no such order' }) : reply(200, found);
      }
      reply(404, { error: 'not found' });
    })().catch(() => reply(500, { error: 'internal error' }));
  });
}
