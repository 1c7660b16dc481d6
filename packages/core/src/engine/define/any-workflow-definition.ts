// Where code that holds workflows side by side imports `AnyWorkflowDefinition` and `WorkflowOf`
// from. They are defined (with the reason `any` is right there) beside the definition they alias,
// in workflow-context.ts, which keeps the workflow types free of import cycles.
export type { AnyWorkflowDefinition, WorkflowOf } from './workflow-context.js';
