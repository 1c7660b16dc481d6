import { CairnError } from '@cairn/core';

/**
 * Where everything lives. Two families of keys:
 *
 * - **Per-run keys** all begin with `<prefix>:run:{<tag>}`, so every key of one run carries the same
 *   hash tag and lands in one Redis Cluster slot: a run's Lua scripts are always single-slot.
 * - **Global keys** (listing indexes, the due set, idempotency keys, versions) all begin with
 *   `{<prefix>}`, so they share one slot of their own and an index script can touch several at once.
 *
 * The hash tag is the text between the first `{` and the first `}` after it, so a run id containing
 * braces (or the empty id, whose tag `{}` would be empty and make Redis hash the whole key) is
 * written as `=` + base64url(id). An id that starts with `=` is encoded too, which keeps the
 * mapping from id to tag one-to-one.
 */
export interface KeySpace {
  readonly prefix: string;
  /** `{prefix}`: the common start of every global key (and their hash tag). */
  readonly global: string;
  /** `{prefix}:runs`: every run by `createdAt`; also the routing key of global scripts. */
  readonly runs: string;
  /** `{prefix}:due`: runs that may need dispatching, scored by when. */
  readonly due: string;
  /** The run's main hash, `<prefix>:run:{<tag>}`; every other key of the run starts with it. */
  run(runId: string): string;
  /** Its state hash (one field per state key). */
  state(runId: string): string;
  /** Its events hash as releases before messages wrote it (one field per event name); read only. */
  events(runId: string): string;
  /** Its messages hash (see `DELIVER_EVENT`). */
  messages(runId: string): string;
  statusIndex(status: string): string;
  workflowIndex(workflow: string): string;
  workflowStatusIndex(workflow: string, status: string): string;
  /**
   * The runs of one tag (`runs.list({ tags })`), scored by `createdAt`: `{prefix}:tag:` + the tag's
   * key and value as a JSON array (`tagToken`). A global key: its hash tag is `{prefix}`, whatever
   * braces the tag holds (only the first `{…}` of a key counts).
   */
  tagIndex(key: string, value: string): string;
  /** One registered version's hash. */
  version(workflow: string, version: string): string;
  /** The versions of one workflow, scored by `createdAt`. */
  versions(workflow: string): string;
  /** The counter that orders versions registered in the same millisecond. */
  readonly versionSeq: string;
  /**
   * The start of a slot key's four keys (`SlotStore`), `<prefix>:slot:{<runTag(key)>}`: each slot
   * key has a hash tag of its own (encoded as a run id's is), so one key's scripts are
   * single-slot and keys spread over a cluster's nodes.
   */
  slot(key: string): string;
}

/** The hash-tag text that stands for `runId` inside a run's keys (see `KeySpace`). */
export function runTag(runId: string): string {
  if (runId !== '' && !/[{}]/.test(runId) && !runId.startsWith('=')) return runId;
  return `=${Buffer.from(runId, 'utf8').toString('base64url')}`;
}

/** The member a version takes in its workflow's sorted set, and the tail of its hash key. */
export function versionMember(workflow: string, version: string): string {
  return JSON.stringify([workflow, version]);
}

/** The field an idempotency key takes in the `{prefix}:idem` hash. */
export function idempotencyField(workflow: string, key: string): string {
  return JSON.stringify([workflow, key]);
}

/** Builds the key layout for `prefix`. Throws `INVALID_INPUT` when the prefix contains `{` or `}`. */
export function createKeySpace(prefix: string): KeySpace {
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new CairnError('INVALID_INPUT', `Redis store prefix must not contain "{" or "}": ${JSON.stringify(prefix)}`);
  }
  const global = `{${prefix}}`;
  const run = (runId: string) => `${prefix}:run:{${runTag(runId)}}`;
  return {
    prefix,
    global,
    runs: `${global}:runs`,
    due: `${global}:due`,
    run,
    state: (runId) => `${run(runId)}:state`,
    events: (runId) => `${run(runId)}:events`,
    messages: (runId) => `${run(runId)}:msgs`,
    statusIndex: (status) => `${global}:status:${status}`,
    workflowIndex: (workflow) => `${global}:wf:${workflow}`,
    workflowStatusIndex: (workflow, status) => `${global}:wfs:${status}:${workflow}`,
    tagIndex: (key, value) => `${global}:tag:${JSON.stringify([key, value])}`,
    version: (workflow, version) => `${global}:version:${versionMember(workflow, version)}`,
    versions: (workflow) => `${global}:versions:${workflow}`,
    versionSeq: `${global}:version-seq`,
    slot: (key) => `${prefix}:slot:{${runTag(key)}}`,
  };
}

/** The Redis Cluster hash tag of a key: what the slot is computed from. */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}
