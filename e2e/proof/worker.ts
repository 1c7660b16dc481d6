/**
 * A worker process of the multi-process proof: an engine (orchestrator and step workers) over the
 * pairing's store and queue. Config in `CAIRN_PROOF_CONFIG`; says `{ ready: true }` once started,
 * stops on `{ stop: true }`. The driver SIGKILLs some of these mid-run.
 */
import { openEngine, type ProofConfig } from './common.js';

const config = JSON.parse(process.env.CAIRN_PROOF_CONFIG ?? '{}') as ProofConfig;

async function main(): Promise<void> {
  const opened = await openEngine(config, `proof-worker:${process.pid}`);
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
