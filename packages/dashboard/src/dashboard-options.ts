import { CairnError, type Engine } from '@cairn/core';

/** Options of `startDashboard`. */
export interface DashboardOptions {
  /** The engine whose runs are shown and acted on (its store and, for retry/fork, its workers). */
  engine: Engine;
  /**
   * The address to listen on. Default `127.0.0.1`. A loopback address (`127.x.x.x`, `localhost`,
   * `::1`) needs nothing more; any other (`0.0.0.0`, a LAN address) needs `allowRemote: true` and
   * a `token`, or `startDashboard` rejects with `INVALID_INPUT`.
   */
  host?: string;
  /** The TCP port. Default `0`: a free port the system picks (read it from the returned `url`). */
  port?: number;
  /**
   * The access token. When set, every request (pages, assets, API reads and actions) must carry
   * it: as `Authorization: Bearer <token>`, or as the cookie the dashboard sets when the page is
   * opened once with `?token=<token>` (the returned `url` carries it). Compared in constant time.
   * Required (at least 16 characters) when `host` is not a loopback address.
   */
  token?: string;
  /** Allows a non-loopback `host`. Without it such a host is refused, token or not. */
  allowRemote?: boolean;
}

/** The options after checking, with defaults applied. */
export interface CheckedDashboardOptions {
  engine: Engine;
  host: string;
  port: number;
  token: string | undefined;
  loopback: boolean;
}

const KNOWN = ['engine', 'host', 'port', 'token', 'allowRemote'];
// A token a remote client must guess: 16 characters is the floor, `openssl rand -hex 16` gives 32.
const MIN_REMOTE_TOKEN = 16;

/** True for the addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const invalid = (message: string) => new CairnError('INVALID_INPUT', `startDashboard: ${message}`);

/**
 * Checks `startDashboard`'s options: a plain object with known keys, an engine, a host string, a
 * port 0..65535, a well-formed token, and the remote rule (a non-loopback host needs
 * `allowRemote: true` and a token of at least 16 characters). Throws `INVALID_INPUT`.
 */
export function checkDashboardOptions(options: unknown): CheckedDashboardOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalid('options must be an object');
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw invalid(`unknown option ${JSON.stringify(key)} (known: ${KNOWN.join(', ')})`);
  }
  const { engine, host = '127.0.0.1', port = 0, token, allowRemote } = options as DashboardOptions;
  if (typeof engine !== 'object' || engine === null || typeof engine.listRuns !== 'function') throw invalid('engine must be a Cairn engine (createEngine)');
  if (typeof host !== 'string' || host.length === 0) throw invalid('host must be a non-empty string');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalid(`port must be an integer from 0 to 65535, got ${String(port)}`);
  if (allowRemote !== undefined && typeof allowRemote !== 'boolean') throw invalid('allowRemote must be true or false');
  if (token !== undefined && (typeof token !== 'string' || token.length === 0 || !/^[\x21-\x7e]+$/.test(token))) {
    // Printable ASCII only: the token travels in a header, a cookie and a URL.
    throw invalid('token must be a non-empty string of printable ASCII characters without spaces');
  }
  const loopback = isLoopbackHost(host);
  if (!loopback) {
    if (allowRemote !== true) throw invalid(`host ${JSON.stringify(host)} is not a loopback address: pass allowRemote: true and a token to listen on it`);
    if (token === undefined) throw invalid(`host ${JSON.stringify(host)} is reachable from other machines: a token is required`);
    if (token.length < MIN_REMOTE_TOKEN) throw invalid(`a token for a remote host must have at least ${MIN_REMOTE_TOKEN} characters`);
  }
  return { engine, host: host === '[::1]' ? '::1' : host, port, token, loopback };
}
