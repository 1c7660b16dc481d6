// Answering an approval gate: every check is made before anything is sent, so a refused answer
// records nothing; an accepted one is the gate's event, sent once (idempotent per gate).
import { type Engine, isTerminalRunStatus, type Json } from '@cairn/core';
import { type ApprovalAnswer, answerShapeProblem, approvalEvent, approverProblem, schemaProblem } from './approval-answer.js';
import { GraphError } from './graph-error.js';
import type { ApprovalNode } from './graph-spec.js';
import { graphMarkerOf } from './graph-of-run.js';

/** Options of `approve`. */
export interface ApproveOptions {
  /** The time the answer is judged at against the gate's expiry (default `Date.now()`; tests pass the engine's clock). */
  readonly now?: number;
}

/** What an accepted answer did. */
export interface ApproveResult {
  readonly runId: string;
  readonly node: string;
  /** The answer's message number in the run's events. */
  readonly seq: number | undefined;
}

/**
 * Answers the approval gate `node` of the graph run `runId`. Refused with a `GraphError`, nothing
 * sent: `APPROVAL_INVALID` (a malformed answer, a node that is not an approval gate, or a payload
 * that fails the gate's schema), `APPROVAL_FORBIDDEN` (`answer.by` is not one of the gate's
 * approvers: the caller asserts `by`, the application must authenticate it), `APPROVAL_EXPIRED`
 * (the gate's expiry has passed), `APPROVAL_NOT_PENDING` (no such run, not a graph run, the run
 * is not waiting at that gate, or the gate was answered already). The gate takes the first
 * accepted answer; the run goes on from it.
 */
export async function approve(
  engine: Pick<Engine, 'getRun' | 'steps' | 'sendEvent'>,
  runId: string,
  node: string,
  answer: ApprovalAnswer,
  options: ApproveOptions = {},
): Promise<ApproveResult> {
  const where = `run ${JSON.stringify(runId)} node ${JSON.stringify(node)}`;
  const shape = answerShapeProblem(answer);
  if (shape !== undefined) throw new GraphError('APPROVAL_INVALID', `${where}: ${shape}`, { node });
  const run = typeof runId === 'string' && runId.length > 0 ? await engine.getRun(runId) : undefined;
  if (run === undefined) throw new GraphError('APPROVAL_NOT_PENDING', `${where}: no such run`, { node });
  if (isTerminalRunStatus(run.status)) throw new GraphError('APPROVAL_NOT_PENDING', `${where}: the run has ended (${run.status})`, { node });
  const steps = await engine.steps(runId);
  const marker = graphMarkerOf(steps);
  if (marker === undefined) throw new GraphError('APPROVAL_NOT_PENDING', `${where}: not a graph run (or it has not started)`, { node });
  const gate = Object.hasOwn(marker.graph.nodes, node) ? marker.graph.nodes[node] : undefined;
  if (gate === undefined || !('approval' in gate))
    throw new GraphError('APPROVAL_INVALID', `${where}: ${marker.workflow} has no approval gate of that name`, { node });
  const forbidden = approverProblem(gate as ApprovalNode, answer.by);
  if (forbidden !== undefined) throw new GraphError('APPROVAL_FORBIDDEN', `${where}: ${forbidden}`, { node });
  const bad = schemaProblem(gate as ApprovalNode, answer.payload);
  if (bad !== undefined) throw new GraphError('APPROVAL_INVALID', `${where}: ${bad}`, { node });
  const wait = steps.find((s) => s.name === node && s.kind === 'select');
  if (wait === undefined || wait.status !== 'waiting') {
    throw new GraphError('APPROVAL_NOT_PENDING', `${where}: the gate is ${wait === undefined ? 'not reached yet' : 'answered or expired'}`, { node });
  }
  const now = options.now ?? Date.now();
  if (wait.wakeAt !== undefined && now >= wait.wakeAt)
    throw new GraphError('APPROVAL_EXPIRED', `${where}: the gate expired at ${new Date(wait.wakeAt).toISOString()}`, { node });
  const message: Json = { by: answer.by, decision: answer.decision, ...(answer.payload === undefined ? {} : { payload: answer.payload }) };
  const delivery = await engine.sendEvent(runId, approvalEvent(node), message, { idempotencyKey: approvalEvent(node) });
  if (!delivery.delivered)
    throw new GraphError('APPROVAL_NOT_PENDING', `${where}: ${delivery.duplicate ? 'the gate was answered already' : 'the run has ended'}`, { node });
  return { runId, node, seq: delivery.seq };
}
