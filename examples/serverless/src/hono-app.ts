// The same app in Hono: the push handler is a Fetch-API function, so it mounts as it is
// (`c.req.raw` is the standard Request). Hono serves on any platform that takes a fetch handler;
// here it runs on node:http through the same `toNodeListener`.
import { createServer, type Server } from 'node:http';
import { toNodeListener } from '@cairn/http';
import { Hono } from 'hono';
import type { ServerlessApp } from './app.js';

export function createHonoApp(app: ServerlessApp): Hono {
  const hono = new Hono();
  hono.post('/api/cairn', (c) => app.handler(c.req.raw));
  hono.post('/orders', async (c) => c.json(await app.startOrder(await c.req.json()), 201));
  hono.get('/orders/:id', async (c) => {
    const found = await app.readOrder(c.req.param('id'));
    return found === undefined ? c.json({ error: 'no such order' }, 404) : c.json(found);
  });
  return hono;
}

export function createHonoServer(app: ServerlessApp): Server {
  const hono = createHonoApp(app);
  return createServer(toNodeListener(async (request) => hono.fetch(request)));
}
