import type { Engine, Json } from '@cairn/core';

/**
 * The operator methods an engine may have besides `cancel`: `retryRun` and `forkRun` came with
 * the operations API. Typed here as optional so the dashboard shows a button only for what the
 * engine it was given can do.
 */
export interface OperatorMethods {
  retryRun?(runId: string, options?: { reason?: string }): Promise<unknown>;
  forkRun?(runId: string, options: { fromStep: string; input?: Json }): Promise<{ id: string }>;
}

/** Which actions the dashboard offers for `engine`. */
export interface ActionSupport {
  cancel: boolean;
  retry: boolean;
  fork: boolean;
}

/** The actions `engine` supports: cancel always, retry and fork when it has the methods. */
export function actionSupport(engine: Engine): ActionSupport {
  const ops = engine as Engine & OperatorMethods;
  return { cancel: true, retry: typeof ops.retryRun === 'function', fork: typeof ops.forkRun === 'function' };
}
