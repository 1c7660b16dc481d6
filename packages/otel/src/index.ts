export { cairnTelemetry } from './cairn-telemetry.js';
export type { CairnTelemetry, CairnTelemetryOptions } from './cairn-telemetry.js';
export { CAIRN_ATTRIBUTES } from './attributes.js';
export { fromCarrier, toCarrier } from './w3c-carrier.js';
