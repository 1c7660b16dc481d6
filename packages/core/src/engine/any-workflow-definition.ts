// The one place `any` stands for "a workflow, whatever its input and output types": every list,
// registry and parameter that holds workflows side by side names them through this alias, so the
// reason (and its lint suppression) is written once.
import type { WorkflowDefinition } from './define-workflow.js';

/**
 * A workflow definition of any input and output type: what code holding several workflows side by
 * side takes (`createEngine({ workflows })`, `ctx.child`, a registry). Any `WorkflowDefinition<I, O>`
 * is assignable to it. `any` is right here and `unknown` is not: the handler takes the input as a
 * parameter, and a parameter is contravariant, so `WorkflowDefinition<{ id: string }>` is not a
 * `WorkflowDefinition<unknown>`; TypeScript has no existential type ("some input type"). It checks
 * nothing about the input: code that knows its workflow uses `WorkflowDefinition<I, O>`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the handler's input is a contravariant parameter and TypeScript has no existential type; see the TSDoc above
export type AnyWorkflowDefinition = WorkflowDefinition<any, any>;

/**
 * A workflow definition that takes `I` (at `startRun`, `ctx.child`) and ends with `O`, whatever
 * its handler receives in between (an `input` schema may transform `I`): what code that starts a
 * workflow takes. `any` for the handler's input for the reason above.
 */
// biome-ignore lint/suspicious/noExplicitAny: the handler's input is a contravariant parameter, and a caller deals only in what the definition takes
export type WorkflowOf<I, O> = WorkflowDefinition<I, O, any>;
