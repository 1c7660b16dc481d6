/**
 * A worker process of the outage test: an engine (orchestrator and step workers) over the
 * backend's store and queue, with the engine's default (console) logger, so the driver sees what a
 * user's logs would show during the outage. Says `{ ready: true }` once started, stops on
 * `{ stop: true }`. It must survive the server's restart: the driver fails if it exits.
 */
import { openEngine, type OutageConfig } from './common.js';

const config = JSON.parse(process.env.CAIRN_OUTAGE_CONFIG ?? '{}') as OutageConfig;

async function main(): Promise<void> {
  const opened = await openEngine(config, `outage-worker:${process.pid}`);
  await opened.engine.start();
  process.on('message', (message) => {
    if (!(message as { stop?: boolean }).stop) return;
    void opened.close().then(() => process.exit(0));
  });
  process.send?.({ ready: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
