// An answer to an approval gate: its shape, and the checks both `approve` (before anything is
// sent) and the gate itself (on what it receives) apply.
import type { Json } from '@cairn/core';
import type { ApprovalNode } from './graph-spec.js';
import { payloadProblems } from './payload-schema.js';

/** An answer to an approval gate. */
export interface ApprovalAnswer {
  /** Who answers: checked against the gate's `approvers`. The application must have authenticated it. */
  readonly by: string;
  readonly decision: 'approve' | 'reject';
  /** Checked against the gate's `schema`. */
  readonly payload?: Json;
}

/** The event an approval gate waits for: `approval:<node>`. */
export const approvalEvent = (node: string): string => `approval:${node}`;

/** Why `value` is not an acceptable answer to `gate` (shape, approver, schema), or `undefined`. */
export function checkAnswer(gate: ApprovalNode, value: unknown): string | undefined {
  return answerShapeProblem(value) ?? approverProblem(gate, (value as ApprovalAnswer).by) ?? schemaProblem(gate, (value as ApprovalAnswer).payload);
}

/** Why `value` is not shaped like an answer, or `undefined`. */
export function answerShapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'an answer is { by, decision, payload? }';
  const a = value as { [key: string]: unknown };
  for (const key of Object.keys(a)) if (!['by', 'decision', 'payload'].includes(key)) return `unknown key ${JSON.stringify(key)} in the answer`;
  if (typeof a.by !== 'string' || a.by.length === 0 || a.by.length > 200) return '`by` must be a non-empty string of at most 200 characters';
  if (a.decision !== 'approve' && a.decision !== 'reject') return '`decision` must be "approve" or "reject"';
  return undefined;
}

/** Why `by` may not answer `gate`, or `undefined`. */
export function approverProblem(gate: ApprovalNode, by: string): string | undefined {
  const approvers = gate.approval.approvers;
  return approvers === undefined || approvers.includes(by) ? undefined : `${JSON.stringify(by)} is not one of the approvers (${approvers.join(', ')})`;
}

/** Why `payload` fails the gate's schema, or `undefined`. */
export function schemaProblem(gate: ApprovalNode, payload: Json | undefined): string | undefined {
  if (gate.approval.schema === undefined) return undefined;
  const problems = payloadProblems(gate.approval.schema, payload);
  return problems.length === 0 ? undefined : `the payload fails the gate's schema: ${problems.join('; ')}`;
}
