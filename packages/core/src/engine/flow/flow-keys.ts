import { CairnError } from '../../errors/cairn-error.js';
import type { Json } from '../../model/json.js';
import { checkIdentifier } from '../check-input.js';
import type { AnyWorkflowDefinition } from '../define/any-workflow-definition.js';
import { MAX_SLOT_NAME_LENGTH as MAX_SLOT_KEY } from '../../store/check-slot-arguments.js';

/** The slot keys of one run: what its workflow's `concurrency` and `rateLimit` count it under. */
export interface RunFlowKeys {
  /** `c:<name length>:<workflow>[:<key>]`, when the workflow has a concurrency limit. */
  concurrency?: string;
  /** `r:<name length>:<workflow>[:<key>]`, when the workflow has a start rate limit. */
  rate?: string;
}

/**
 * The slot keys of a run of `def` with `input`. The workflow name is length-prefixed, so no pair
 * of (workflow, key) can spell another's key whatever characters either holds. Throws
 * `INVALID_INPUT` when a key function throws or returns anything but a non-empty, well-formed
 * string without NUL that fits the 512-character slot key.
 */
export function flowKeys(def: AnyWorkflowDefinition, input: Json): RunFlowKeys {
  const keys: RunFlowKeys = {};
  const { concurrency, rateLimit } = def.options;
  if (concurrency !== undefined) keys.concurrency = slotKey('c', def.name, 'concurrency', concurrency.key, input);
  if (rateLimit !== undefined) keys.rate = slotKey('r', def.name, 'rateLimit', rateLimit.key, input);
  return keys;
}

// biome-ignore lint/suspicious/noExplicitAny: the workflow's own key function, typed for its input, which reaches it as the stored JSON
function slotKey(kind: string, workflow: string, option: string, keyOf: ((input: any) => string) | undefined, input: Json): string {
  const prefix = `${kind}:${workflow.length}:${workflow}`;
  if (keyOf === undefined) return prefix;
  return `${prefix}:${keyOfInput(`Workflow ${JSON.stringify(workflow)} ${option} key`, keyOf, input, MAX_SLOT_KEY - prefix.length - 1)}`;
}

/**
 * Calls a workflow's key function (`what` names it) on a run's input and checks what it returns:
 * `INVALID_INPUT` when it throws or returns anything but a non-empty, well-formed string without
 * NUL of at most `maxLength` characters.
 */
// biome-ignore lint/suspicious/noExplicitAny: the workflow's own key function, typed for its input, which reaches it as the stored JSON
export function keyOfInput(what: string, keyOf: (input: any) => unknown, input: Json, maxLength: number): string {
  let key: unknown;
  try {
    key = keyOf(input);
  } catch (error) {
    throw new CairnError('INVALID_INPUT', `${what} threw for this input: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
      data: { argument: what },
    });
  }
  return checkIdentifier(what, key, maxLength);
}
