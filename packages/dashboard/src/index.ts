export { startDashboard, CONTENT_SECURITY_POLICY } from './start-dashboard.js';
export type { Dashboard } from './start-dashboard.js';
export type { DashboardOptions } from './dashboard-options.js';
export type { RunView } from './run-view.js';
export type { Overview, WorkflowOverview, OverviewCounts, OverviewHour, FailureGroup } from './overview.js';
