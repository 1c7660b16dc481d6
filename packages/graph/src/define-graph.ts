// `defineGraph`: a graph checked, frozen and fingerprinted, as an ordinary workflow definition the
// engine registers like any other (its handler interprets the graph).
import { type AnyWorkflowDefinition, CairnError, type Duration, defineWorkflow, type Json, type WorkflowDefinition } from '@cairn/core';
import { graphHash } from './graph-hash.js';
import type { GraphSpec } from './graph-spec.js';
import { type GraphAction, runGraph } from './run-graph.js';
import { checkGraph } from './validate-graph.js';

/** Options of `defineGraph`. */
export interface DefineGraphOptions {
  /** The version new runs start on (default `'1'`). A changed graph needs a new version while runs of the old one are in flight. */
  readonly version?: string;
  readonly description?: string;
  /** A run's default deadline (see `defineWorkflow`). */
  readonly deadline?: Duration;
  /** The functions the graph's `action` nodes call, by name. Every action the graph names must be here. */
  readonly actions?: { readonly [name: string]: GraphAction };
}

/** A graph workflow: a workflow definition that also carries its graph and the graph's fingerprint. */
export interface GraphWorkflow<I = Json, O = Json> extends WorkflowDefinition<I, O> {
  /** The graph, validated and frozen. */
  readonly graph: GraphSpec;
  /** The first 16 hex digits of the SHA-256 of the graph's canonical JSON: recorded by every run. */
  readonly graphHash: string;
}

/** Whether a workflow definition is a graph workflow. */
export function isGraphWorkflow(definition: AnyWorkflowDefinition): definition is GraphWorkflow {
  return typeof (definition as { graphHash?: unknown }).graphHash === 'string' && typeof (definition as { graph?: unknown }).graph === 'object';
}

/**
 * Defines a graph workflow. `spec` is validated (`GRAPH_INVALID` listing every problem, each naming
 * its node: unknown nodes or actions, unreachable nodes, cycles, references to nodes that cannot
 * have run yet, bad conditions, bad durations, over-deep or over-large input) and copied, so later
 * changes to the object passed in change nothing. Registered with `createEngine({ workflows })`
 * like any workflow. Throws `INVALID_INPUT` for a bad name, version or action.
 */
export function defineGraph<I = Json, O = Json>(name: string, spec: GraphSpec | unknown, options: DefineGraphOptions = {}): GraphWorkflow<I, O> {
  const actions = new Map<string, GraphAction>();
  for (const [key, fn] of Object.entries(options.actions ?? {})) {
    if (typeof fn !== 'function') throw new CairnError('INVALID_INPUT', `Graph ${JSON.stringify(name)}: action ${JSON.stringify(key)} must be a function`);
    actions.set(key, fn);
  }
  const graph = deepFreeze(structuredClone(checkGraph(spec, { actions: new Set(actions.keys()) })));
  const hash = graphHash(graph as unknown as Json);
  const { actions: _actions, ...workflowOptions } = options;
  const definition = defineWorkflow(name, (ctx, input: Json) => runGraph(ctx, graph, hash, actions, input ?? null), workflowOptions);
  return Object.freeze({ ...definition, graph, graphHash: hash }) as unknown as GraphWorkflow<I, O>;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
