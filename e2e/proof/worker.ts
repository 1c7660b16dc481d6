/**
 * A worker process of the multi-process proof: an engine (orchestrator and step workers) over the
 * pairing's store and queue. Config in `CAIRN_PROOF_CONFIG`; says `{ ready: true }` once started,
 * stops on `{ stop: true }`. The driver SIGKILLs some of these mid-run.
 */
import { openEngine, type ProofConfig } from './common.js';
import { runWorkerProcess } from './worker-process.js';

const config = JSON.parse(process.env.CAIRN_PROOF_CONFIG ?? '{}') as ProofConfig;

runWorkerProcess(() => openEngine(config, `proof-worker:${process.pid}`));
