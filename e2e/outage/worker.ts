/**
 * A worker process of the outage test: an engine (orchestrator and step workers) over the
 * backend's store and queue, with the engine's default (console) logger, so the driver sees what a
 * user's logs would show during the outage. Says `{ ready: true }` once started, stops on
 * `{ stop: true }`. It must survive the server's restart: the driver fails if it exits.
 */
import { openEngine, type OutageConfig } from './common.js';
import { runWorkerProcess } from '../proof/worker-process.js';

const config = JSON.parse(process.env.CAIRN_OUTAGE_CONFIG ?? '{}') as OutageConfig;

runWorkerProcess(() => openEngine(config, `outage-worker:${process.pid}`));
