// Applies a Standard Schema to a payload where it enters the engine (a workflow's input in
// `startRun`, an event's payload in `sendEvent`, a workflow's output when its handler returns), and
// turns a refusal into a CairnError whose data carries the schema's issues as JSON.
import { CairnError } from '../errors/cairn-error.js';
import type { ErrorCode } from '../errors/error-codes.js';
import type { Json } from '../model/json.js';
import { describePath } from '../serialization/json-value.js';
import type { StandardSchemaV1 } from './standard-schema.js';

/** One issue of a refused payload, as an error's `data.issues` carries it. */
export interface SchemaIssue {
  /** The schema's message. */
  message: string;
  /** Where, from the payload's root (`[]`: the payload itself); symbol keys as their description. */
  path: (string | number)[];
}

/** At most this many issues are kept in an error's data (the message counts them all). */
export const MAX_SCHEMA_ISSUES = 20;
// The longest issue message kept, in UTF-16 code units.
const MAX_ISSUE_MESSAGE = 500;

/** Whether `value` implements Standard Schema v1 (an object or function with a `~standard` whose `validate` is a function). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return (
    typeof props === 'object' &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === 'function'
  );
}

function pathKey(segment: unknown): string | number {
  const key = typeof segment === 'object' && segment !== null && 'key' in segment ? (segment as { key: unknown }).key : segment;
  if (typeof key === 'number' || typeof key === 'string') return key;
  if (typeof key === 'symbol') return key.description ?? 'Symbol()';
  return String(key);
}

function toIssue(issue: unknown): SchemaIssue {
  const raw = (typeof issue === 'object' && issue !== null ? issue : {}) as { message?: unknown; path?: unknown };
  const text = typeof raw.message === 'string' ? raw.message : 'invalid';
  const message = text.length > MAX_ISSUE_MESSAGE ? `${text.slice(0, MAX_ISSUE_MESSAGE - 1)}…` : text;
  // Array.from, not map: a library's path may be an array subclass (ArkType's), whose map makes another.
  return { message, path: Array.isArray(raw.path) ? Array.from(raw.path as unknown[], pathKey) : [] };
}

/** How `validatePayload` names the payload and what its error carries. */
export interface PayloadSchemaContext {
  /** The code of the error for a refused payload: `INVALID_INPUT` at a call, `INVALID_OUTPUT` for a run's output. */
  code: ErrorCode;
  /** Names the payload in the message: `input of workflow "order"`. */
  what: string;
  /** Names the payload at the start of an issue's path in the message: `input`, `payload`, `output`. */
  root: string;
  /** The rest of the error's data (`issues` is added). */
  data: Record<string, Json>;
}

/**
 * Validates `value` with `schema` (awaiting an async validator) and returns the schema's value,
 * which may differ from `value` (a schema may transform). A refused value throws `CairnError`
 * with `context.code`, a message quoting the first issue and where it is
 * (`input of workflow "order" does not match its schema: Invalid email at input.customer.email
 * (and 2 more issues)`), and `data.issues` (`SchemaIssue[]`, at most `MAX_SCHEMA_ISSUES`; the
 * count in `data.issueCount`). A validator that throws, or returns something that is not a result,
 * throws the same code with the error as `cause`.
 */
export async function validatePayload(schema: StandardSchemaV1, value: unknown, context: PayloadSchemaContext): Promise<unknown> {
  let result: StandardSchemaV1.Result<unknown>;
  try {
    result = await schema['~standard'].validate(value);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CairnError(context.code, `${context.what}: its schema failed to validate it: ${reason}`, { cause: error, data: { ...context.data, issues: [] } });
  }
  if (typeof result !== 'object' || result === null) {
    throw new CairnError(context.code, `${context.what}: its schema's validate returned no result`, { data: { ...context.data, issues: [] } });
  }
  if (result.issues === undefined) return result.value;
  const all = Array.from(result.issues, toIssue);
  const first = all[0] ?? { message: 'invalid', path: [] };
  const more = all.length > 1 ? ` (and ${all.length - 1} more issue${all.length > 2 ? 's' : ''})` : '';
  throw new CairnError(context.code, `${context.what} does not match its schema: ${first.message} at ${describePath(context.root, first.path)}${more}`, {
    data: { ...context.data, issues: all.slice(0, MAX_SCHEMA_ISSUES) as unknown as Json, issueCount: all.length },
  });
}
