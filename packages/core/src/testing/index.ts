export { ManualClock } from '../clock/manual-clock.js';
export type { ManualClockOptions, RunAllOptions } from '../clock/manual-clock.js';
export { createFaults, SimulatedCrash } from './fault-injector.js';
export type { CrashRule, ScriptedFaults } from './fault-injector.js';
export { FAULT_POINTS } from '../engine/fault-point.js';
export type { FaultPoint, FaultSite, FaultInjector } from '../engine/fault-point.js';
export { replayHistory, replayHistoryFolder } from './replay-history.js';
export type { ReplayedHistory } from './replay-history.js';
