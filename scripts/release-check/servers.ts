// The servers the consumer tests run against, from the test-server provider of @cairn/conformance
// (e2e/src/services): a URL from the environment, else Testcontainers, else a local server on a
// free port in a temp dir, stopped (and its dir removed) by `stop()`. A release check does not
// skip: a server that cannot be had fails the phases that need it, saying how to provide one.
import { startService, URL_ENV, type ServiceName } from '../../e2e/src/services/index.js';

export interface ServerForCheck {
  name: ServiceName;
  url: string;
  detail: string;
  stop(): Promise<void>;
}

/** Starts one server; throws (naming the variable that would provide one) when none can be had. */
export async function startServer(name: ServiceName): Promise<ServerForCheck> {
  const result = await startService(name, { log: (line) => console.log(`  [services] ${line}`) });
  if (result.skipped) {
    throw new Error(`no ${name} server for the consumer tests: ${result.reason}. Install one (docs/testing.md) or set ${URL_ENV[name]}.`);
  }
  return { name, url: result.url, detail: `${result.source}: ${result.detail}`, stop: () => result.stop() };
}
