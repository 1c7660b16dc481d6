// The push handler on Node's own http server: `http.createServer(toNodeListener(handler))`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { FetchHandler } from './create-http-handler.js';

/**
 * A `node:http` request listener that serves `handler`: each request becomes a Fetch `Request`
 * (its body streamed, so the handler's size limit stops reading an oversized one) and the
 * `Response` is written back. A handler that throws answers 500.
 */
export function toNodeListener(handler: FetchHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      let response: Response;
      try {
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
          if (value === undefined) continue;
          for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
        }
        const method = req.method ?? 'GET';
        const hasBody = method !== 'GET' && method !== 'HEAD';
        const init: RequestInit & { duplex?: 'half' } = { method, headers };
        if (hasBody) {
          init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
          init.duplex = 'half';
        }
        response = await handler(new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`), init));
      } catch {
        response = new Response(JSON.stringify({ error: 'internal error' }), { status: 500, headers: { 'content-type': 'application/json' } });
      }
      const text = Buffer.from(await response.arrayBuffer());
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(text);
      // A body the handler refused unread is not drained: close the connection after the answer.
      if (!req.complete) req.destroy();
    })();
  };
}
