import type { Engine, StepRecord } from '@cairn/core';
import type { GraphMarker } from '@cairn/graph';
import { CliError } from '../cli-error.js';
import type { CliCommand } from '../command.js';
import { importBackend } from '../connect/backend.js';
import { loadWorkflows } from '../connect/load-workflows.js';
import { EXIT } from '../exit-codes.js';
import { safeText } from '../render/safe-text.js';

interface GraphCommandOptions {
  run?: string;
  workflows?: string;
  direction?: 'TD' | 'LR';
}

const loadGraph = () => importBackend({ title: 'graph', packages: '@cairn/graph' }, () => import('@cairn/graph'));

/** The newest run of `workflow` (and `version`) that recorded a graph, among its newest 1,000 runs. */
async function graphOfNewestRun(
  engine: Engine,
  graphMarkerOf: (steps: StepRecord[]) => GraphMarker | undefined,
  workflow: string,
  version: string | undefined,
): Promise<GraphMarker | undefined> {
  let cursor: string | undefined;
  for (let page = 0; page < 5; page += 1) {
    const found = await engine.listRuns({ workflow, limit: 200, ...(cursor === undefined ? {} : { cursor }) });
    for (const run of found.runs) {
      if (version !== undefined && run.version !== version) continue;
      const marker = graphMarkerOf(await engine.steps(run.id));
      if (marker !== undefined) return marker;
    }
    cursor = found.nextCursor;
    if (cursor === undefined) break;
  }
  return undefined;
}

/**
 * `cairn graph <workflow> [version]`: prints a graph workflow as a Mermaid flowchart — the graph
 * its newest run (of that version) recorded, or with `--workflows`, the definition in the module;
 * `cairn graph --run <id>` draws one run's graph with each node's state (a code run: its recorded
 * calls in call order). Exit 3 when there is no such graph or run.
 */
export const graphCommand: CliCommand = {
  name: 'graph',
  register(program, cli) {
    program
      .command('graph')
      .description(
        "Print a graph workflow as a Mermaid flowchart: the graph its newest run recorded, a module's definition, or one run's graph with each node's state.",
      )
      .argument('[workflow]', 'the graph workflow')
      .argument('[version]', 'its version (default: the newest run, whatever its version; with --workflows, the last definition)')
      .option('--run <run-id>', "draw this run's graph, each node coloured by its state (a code run: its recorded calls in call order)")
      .option('--workflows <module>', 'read the graph from this module (as `cairn check` loads it) instead of the store')
      .option('--direction <dir>', 'TD (top-down, default) or LR')
      .action(async (workflow: string | undefined, version: string | undefined, options: GraphCommandOptions) => {
        const graph = await loadGraph();
        const direction = options.direction === 'LR' ? 'LR' : 'TD';
        if (options.direction !== undefined && options.direction !== 'TD' && options.direction !== 'LR')
          throw new CliError(EXIT.usage, '--direction: TD or LR');
        if (options.run === undefined && workflow === undefined) throw new CliError(EXIT.usage, 'name a workflow, or a run with --run');
        if (options.workflows !== undefined) {
          const defs = (await loadWorkflows(options.workflows, cli.io.cwd)).filter((d) => d.name === workflow && graph.isGraphWorkflow(d));
          const def = version === undefined ? defs.at(-1) : defs.find((d) => d.version === version);
          if (def === undefined || !graph.isGraphWorkflow(def)) {
            throw new CliError(
              EXIT.notFound,
              `${safeText(options.workflows)} defines no graph workflow ${safeText(workflow ?? '')}${version === undefined ? '' : ` version ${safeText(version)}`}`,
            );
          }
          cli.print(graph.toMermaid(def.graph, { direction }).trimEnd());
          return;
        }
        await cli.withConnection(async ({ engine }) => {
          if (options.run !== undefined) {
            if ((await engine.getRun(options.run)) === undefined) throw new CliError(EXIT.notFound, `Run ${safeText(options.run)} not found`);
            const steps = await engine.steps(options.run);
            const marker = graph.graphMarkerOf(steps);
            if (marker !== undefined) {
              cli.print(graph.toMermaid(marker.graph, { direction, states: graph.nodeStates(marker, steps) }).trimEnd());
              return;
            }
            // A code run has no graph: draw what it did, its recorded calls in call order.
            const drawn = graph.historyGraph(steps);
            cli.print(graph.toMermaid(drawn.graph, { direction, states: drawn.states }).trimEnd());
            return;
          }
          const marker = await graphOfNewestRun(engine, graph.graphMarkerOf, workflow as string, version);
          if (marker === undefined) {
            throw new CliError(
              EXIT.notFound,
              `No run of ${safeText(workflow as string)}${version === undefined ? '' : ` version ${safeText(version)}`} recorded a graph (among its newest 1,000 runs); pass --workflows to draw it from the code`,
            );
          }
          cli.print(graph.toMermaid(marker.graph, { direction }).trimEnd());
        });
      });
  },
};
