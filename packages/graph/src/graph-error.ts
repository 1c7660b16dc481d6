// The errors of graph workflows. A `GraphError` thrown in a run is recorded like any error (its
// name, `code`, message), so `cairn show` and the dashboard show the code and the node.

/** Why a graph, a condition or an approval was refused. */
export type GraphErrorCode =
  /** The graph definition is invalid: `issues` lists every problem, each naming its node. */
  | 'GRAPH_INVALID'
  /** A condition could not be evaluated on the run's data (the run fails). */
  | 'GRAPH_CONDITION'
  /** The data a node needs is not of the right shape (`forEach.items` is not a list): a failure of the node. */
  | 'GRAPH_DATA'
  /** An approval gate was rejected and has no `onReject` edge (a failure of the node). */
  | 'APPROVAL_REJECTED'
  /** An approval gate expired and has no `onExpiry` edge (a failure of the node). */
  | 'APPROVAL_EXPIRED'
  /** `approve` was refused: the answer is malformed, its payload fails the schema, or `by` may not answer. */
  | 'APPROVAL_INVALID'
  /** `approve` was refused: `by` is not one of the gate's approvers. */
  | 'APPROVAL_FORBIDDEN'
  /** `approve` was refused: the run is not waiting at that gate (not reached, answered, expired, or ended). */
  | 'APPROVAL_NOT_PENDING';

/** What is wrong with one part of a graph. */
export interface GraphIssue {
  /** The node the problem is in; `undefined` for the graph itself (`start`, `output`, size). */
  readonly node: string | undefined;
  /** A short machine-readable name of the problem. */
  readonly problem: GraphProblem;
  /** The problem in words. */
  readonly message: string;
}

/** The problems validation reports. */
export type GraphProblem =
  | 'not-json'
  | 'too-large'
  | 'too-deep'
  | 'bad-id'
  | 'bad-node'
  | 'unknown-node'
  | 'unknown-action'
  | 'unreachable'
  | 'cycle'
  | 'bad-ref'
  | 'ref-not-before'
  | 'bad-condition'
  | 'bad-schema'
  | 'bad-duration';

/** An error of a graph workflow, with a code and the node it concerns. */
export class GraphError extends Error {
  /** The machine-readable reason. */
  readonly code: GraphErrorCode;
  /** The node concerned, when there is one. */
  readonly node: string | undefined;
  /** For `GRAPH_INVALID`: every problem found, in the graph's order. */
  readonly issues: readonly GraphIssue[];

  constructor(code: GraphErrorCode, message: string, options: { node?: string | undefined; issues?: readonly GraphIssue[] } = {}) {
    super(message);
    this.name = 'GraphError';
    this.code = code;
    this.node = options.node;
    this.issues = options.issues ?? [];
  }

  /** True when `err` is a graph error (also one rebuilt from a run's record), optionally with `code`. */
  static is(err: unknown, code?: GraphErrorCode): err is GraphError {
    if (typeof err !== 'object' || err === null) return false;
    const candidate = err as { name?: unknown; code?: unknown };
    return candidate.name === 'GraphError' && typeof candidate.code === 'string' && (code === undefined || candidate.code === code);
  }
}
