// A graph run is an ordinary workflow run: this is its handler. Each node is one primitive call
// named after the node (`ctx.step`, `ctx.child`, `ctx.select`, `ctx.sleep`), so the history, the
// replay, crash recovery, the timeline, the CLI and the doctor see nothing new. The first call of
// every run is the graph's marker step (`graph:<hash>`): a changed graph replays a different first
// call, which is a divergence like changed code.
import { CairnError, type Json, type StepContext, type WorkflowContext } from '@cairn/core';
import { evaluateCondition, resolveMapping, resolveRef, type Scope } from './graph-data.js';
import { GraphError } from './graph-error.js';
import { approvalEvent, checkAnswer } from './approval-answer.js';
import { edgesOf, type GraphNode, type GraphSpec, isBranch, nodeKind, targetList } from './graph-spec.js';

/** What an action receives besides its input. */
export interface ActionContext extends StepContext {
  /** The node that calls it (for an item of a `forEach`, `<node>[<index>]`). */
  readonly node: string;
}

/** A registered action: takes the node's input (JSON), returns its output (JSON, or nothing). */
export type GraphAction = (input: Json, context: ActionContext) => unknown;

/** The name of a graph's marker step, the first call of each of its runs. */
export const markerName = (hash: string): string => `graph:${hash}`;

/** What the marker step records: enough to draw the run and check its approvals without the code. */
export interface GraphMarker {
  readonly workflow: string;
  readonly version: string;
  readonly hash: string;
  readonly graph: GraphSpec;
}

/** The errors that are a node's failure (its `onError` edge), as opposed to the run's end (cancellation, divergence). */
const NODE_FAILURES = new Set([
  'STEP_FAILED',
  'STEP_TIMEOUT',
  'CHILD_FAILED',
  'EVENT_TIMEOUT',
  'APPROVAL_REJECTED',
  'APPROVAL_EXPIRED',
  'APPROVAL_INVALID',
  'GRAPH_DATA',
]);

function isNodeFailure(error: unknown): error is Error & { code: string } {
  return (CairnError.is(error) || GraphError.is(error)) && NODE_FAILURES.has(error.code);
}

/** A node's failure as the data sees it (the output of a node that took its `onError` edge). */
function failureOutput(error: Error & { code: string }): Json {
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return { error: { code: error.code, message: cause ?? error.message } };
}

const fixed = (delay: number | string) => ({ type: 'fixed' as const, delay: delay as number });

/** Runs `graph` as the workflow `ctx` belongs to. */
export async function runGraph(ctx: WorkflowContext, graph: GraphSpec, hash: string, actions: ReadonlyMap<string, GraphAction>, input: Json): Promise<Json> {
  const marker: GraphMarker = { workflow: ctx.workflow, version: ctx.version, hash, graph };
  await ctx.step(markerName(hash), () => marker as unknown as Json);

  const ids = Object.keys(graph.nodes);
  const outputs = new Map<string, Json>();
  const scope: Scope = { input, outputs };
  const incoming = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const id of ids) for (const e of edgesOf(id, graph.nodes[id] as GraphNode)) incoming.get(e.to)?.push(id);
  const starts = new Set(targetList(graph.start));

  const call = (
    name: string,
    id: string,
    input: Json,
    retries: number | undefined,
    extra: { backoff?: number | string; timeout?: number | string; compensate?: string } = {},
  ) => {
    const action = actions.get(name) as GraphAction;
    const undo = extra.compensate === undefined ? undefined : (actions.get(extra.compensate) as GraphAction);
    return ctx.step(id, (s: StepContext) => action(input, { runId: s.runId, key: s.key, attempt: s.attempt, signal: s.signal, node: id }) as Json, {
      ...(retries === undefined ? {} : { retries }),
      ...(extra.backoff === undefined ? {} : { backoff: fixed(extra.backoff) }),
      ...(extra.timeout === undefined ? {} : { timeout: extra.timeout as number }),
      ...(undo === undefined
        ? {}
        : {
            compensate: () =>
              undo({ input, output: outputs.get(id) ?? null }, { runId: ctx.runId, key: `${id}:compensate`, attempt: 1, signal: ctx.signal, node: id }),
          }),
    });
  };

  /** Runs a node; returns the targets it takes. A failure with no edge for it is thrown. */
  const runNode = async (id: string): Promise<readonly string[]> => {
    const node = graph.nodes[id] as GraphNode;
    try {
      const output = await perform(id, node);
      if ('approval' in node) {
        const answer = output as { decision: string };
        outputs.set(id, output);
        if (answer.decision === 'reject') {
          if (node.onReject !== undefined) return [node.onReject];
          throw new GraphError('APPROVAL_REJECTED', `node ${JSON.stringify(id)}: the approval was rejected`, { node: id });
        }
      } else outputs.set(id, output);
      return taken(id, node);
    } catch (error) {
      if ('approval' in node && GraphError.is(error, 'APPROVAL_EXPIRED') && node.onExpiry !== undefined) {
        outputs.set(id, failureOutput(error));
        return [node.onExpiry];
      }
      if (isNodeFailure(error) && node.onError !== undefined) {
        outputs.set(id, failureOutput(error));
        return [node.onError];
      }
      throw error;
    }
  };

  const taken = (id: string, node: GraphNode): readonly string[] => {
    const next = node.next;
    if (!isBranch(next)) return targetList(next);
    for (const clause of next.branch) if (evaluateCondition(clause.when, scope, id)) return targetList(clause.to);
    return targetList(next.otherwise);
  };

  const perform = async (id: string, node: GraphNode): Promise<Json> => {
    switch (nodeKind(node)) {
      case 'action': {
        const n = node as Extract<GraphNode, { action: string }>;
        const value = await call(n.action, id, n.input === undefined ? input : resolveMapping(n.input, scope), n.retries, n);
        return (value ?? null) as Json;
      }
      case 'workflow': {
        const n = node as Extract<GraphNode, { workflow: string }>;
        return ((await ctx.child(n.workflow, n.input === undefined ? input : resolveMapping(n.input, scope), { name: id })) ?? null) as Json;
      }
      case 'event': {
        const n = node as Extract<GraphNode, { event: string }>;
        const won = await ctx.select(id, { message: { event: n.event }, ...(n.timeout === undefined ? {} : { timeout: { timer: n.timeout as number } }) });
        if (won.winner === 'timeout')
          throw new CairnError('EVENT_TIMEOUT', `node ${JSON.stringify(id)}: no ${JSON.stringify(n.event)} event within ${n.timeout}`);
        return won.value as Json;
      }
      case 'approval': {
        const n = node as Extract<GraphNode, { approval: object }>;
        const expiry = n.approval.expiry;
        const won = await ctx.select(id, { answer: { event: approvalEvent(id) }, ...(expiry === undefined ? {} : { expired: { timer: expiry as number } }) });
        if (won.winner === 'expired') throw new GraphError('APPROVAL_EXPIRED', `node ${JSON.stringify(id)}: no answer within ${expiry}`, { node: id });
        // approve() checked the answer; one sent around it (engine.sendEvent) is checked here too.
        const problem = checkAnswer(n, won.value);
        if (problem !== undefined) throw new GraphError('APPROVAL_INVALID', `node ${JSON.stringify(id)}: ${problem}`, { node: id });
        return won.value as Json;
      }
      case 'sleep': {
        const n = node as Extract<GraphNode, { sleep: unknown }>;
        await ctx.sleep(id, n.sleep as number);
        return null;
      }
      case 'forEach': {
        const n = (node as Extract<GraphNode, { forEach: object }>).forEach;
        const items = resolveRef(n.items, scope);
        if (!Array.isArray(items))
          throw new GraphError('GRAPH_DATA', `node ${JSON.stringify(id)}: forEach.items ${JSON.stringify(n.items.$ref)} is not a list`, { node: id });
        const results: Json[] = new Array(items.length).fill(null);
        const one = async (index: number) => {
          const item = items[index] as Json;
          const itemInput = n.input === undefined ? item : resolveMapping(n.input, { ...scope, item, index });
          const name = `${id}[${index}]`;
          const value = n.action !== undefined ? await call(n.action, name, itemInput, n.retries) : await ctx.child(n.workflow as string, itemInput, { name });
          results[index] = (value ?? null) as Json;
        };
        // `concurrency` lanes, each taking the next item when its last one is done.
        let nextIndex = 0;
        const lane = async () => {
          while (nextIndex < items.length) await one(nextIndex++);
        };
        await Promise.all(Array.from({ length: Math.min(n.concurrency ?? items.length, items.length) }, lane));
        return results;
      }
    }
  };

  // Dead-path elimination: a node is decided once every node with an edge to it is; it runs when
  // at least one of those edges was taken, and is skipped (taking none of its own) otherwise.
  const decided = new Map<string, Promise<readonly string[]>>();
  const decide = (id: string): Promise<readonly string[]> => {
    let promise = decided.get(id);
    if (promise === undefined) {
      promise = (async () => {
        if (!starts.has(id)) {
          const preds = incoming.get(id) ?? [];
          const fired = await Promise.all(preds.map((p) => decide(p)));
          if (!fired.some((targets) => targets.includes(id))) return [];
        }
        return runNode(id);
      })();
      decided.set(id, promise);
    }
    return promise;
  };
  await Promise.all(ids.map((id) => decide(id)));
  if (graph.output !== undefined) return resolveMapping(graph.output, scope);
  const out: { [id: string]: Json } = {};
  for (const id of ids) if (outputs.has(id)) out[id] = outputs.get(id) as Json;
  return out;
}
