import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header every action must carry: a cross-site form or a simple request cannot set it. */
export const ACTION_HEADER = 'x-cairn-dashboard';

/** What to do with a request. */
export type AccessDecision =
  | { kind: 'allow' }
  | { kind: 'deny'; status: number; message: string }
  /** The token came as `?token=`: set the cookie and send the browser to `location` without it. */
  | { kind: 'set-cookie'; cookie: string; location: string };

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Decides who may use the dashboard. Three checks, in order:
 * 1. On a loopback bind, the `Host` header must name this server (`127.0.0.1:PORT`,
 *    `localhost:PORT`, `[::1]:PORT`): a page on another site that re-points its DNS name at
 *    127.0.0.1 (DNS rebinding) is refused.
 * 2. With a token, every request must carry it (`Authorization: Bearer`, or the cookie set from a
 *    `?token=` URL); compared as SHA-256 digests with `timingSafeEqual`, so the time taken says
 *    nothing about how much of a guess was right.
 * 3. An action (any non-GET) must be a POST with the `X-Cairn-Dashboard` header and a JSON body,
 *    and, when the browser says where it comes from (`Origin`, `Sec-Fetch-Site`), come from this
 *    origin: the CSRF defence, which holds with or without a token.
 */
export class AccessControl {
  readonly cookieName: string;
  private readonly expected: Buffer | undefined;
  private readonly hosts: Set<string> | undefined;

  constructor(options: { token: string | undefined; loopback: boolean; host: string; port: number }) {
    this.expected = options.token === undefined ? undefined : digest(options.token);
    // Cookies are shared by every port of a host: one name per port keeps two dashboards apart.
    this.cookieName = `cairn_dashboard_${options.port}`;
    const bound = options.host.includes(':') ? `[${options.host}]` : options.host;
    this.hosts = options.loopback ? new Set(['127.0.0.1', 'localhost', '[::1]', bound].map((h) => `${h}:${options.port}`)) : undefined;
  }

  /** Decides `request`; `url` is its parsed URL. */
  decide(request: IncomingMessage, url: URL): AccessDecision {
    const host = request.headers.host;
    if (this.hosts && (host === undefined || !this.hosts.has(host.toLowerCase()))) {
      return { kind: 'deny', status: 421, message: 'This dashboard only answers requests addressed to its loopback address.' };
    }
    if (this.expected) {
      const fromUrl = url.searchParams.get('token');
      if (fromUrl !== null && request.method === 'GET' && !url.pathname.startsWith('/api/')) {
        if (!this.matches(fromUrl)) return { kind: 'deny', status: 401, message: 'Wrong token.' };
        url.searchParams.delete('token');
        const cookie = `${this.cookieName}=${encodeURIComponent(fromUrl)}; Path=/; HttpOnly; SameSite=Strict`;
        return { kind: 'set-cookie', cookie, location: url.pathname + url.search };
      }
      if (!this.matches(this.presented(request))) {
        return {
          kind: 'deny',
          status: 401,
          message: 'This dashboard needs its access token: open the URL it printed (with ?token=) or send Authorization: Bearer <token>.',
        };
      }
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') return this.decideAction(request, host);
    return { kind: 'allow' };
  }

  private decideAction(request: IncomingMessage, host: string | undefined): AccessDecision {
    if (request.method !== 'POST') return { kind: 'deny', status: 405, message: 'Actions are POST requests.' };
    if (request.headers[ACTION_HEADER] !== '1') return { kind: 'deny', status: 403, message: `Actions need the ${ACTION_HEADER} header.` };
    const type = request.headers['content-type'] ?? '';
    if (!/^application\/json\s*(;|$)/i.test(type)) return { kind: 'deny', status: 415, message: 'Actions take a JSON body (Content-Type: application/json).' };
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`)
      return { kind: 'deny', status: 403, message: 'Actions must come from the dashboard itself (Origin).' };
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      return { kind: 'deny', status: 403, message: 'Actions must come from the dashboard itself (Sec-Fetch-Site).' };
    return { kind: 'allow' };
  }

  /** The token the request carries: the bearer header first, else the cookie. */
  private presented(request: IncomingMessage): string | undefined {
    const auth = request.headers.authorization;
    if (auth !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      return m ? m[1] : undefined;
    }
    for (const part of (request.headers.cookie ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === this.cookieName) {
        try {
          return decodeURIComponent(part.slice(eq + 1).trim());
        } catch {
          return undefined;
        }
      }
    }
    return undefined;
  }

  private matches(candidate: string | undefined): boolean {
    if (candidate === undefined || this.expected === undefined) return false;
    return timingSafeEqual(digest(candidate), this.expected);
  }
}
