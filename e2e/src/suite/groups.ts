import type { CaseGroup } from './case.js';
import { eventsGroup } from './store/events.js';
import { historyGroup } from './store/history.js';
import { hostileNamesGroup } from './store/hostile-names.js';
import { payloadsGroup } from './store/payloads.js';
import { runsGroup } from './store/runs.js';
import { stateGroup } from './store/state.js';
import { stepsGroup } from './store/steps.js';
import { versionsGroup } from './store/versions.js';

/** Layer 1: the store contract, noun by noun. */
export const storeGroups: readonly CaseGroup[] = [
  runsGroup,
  stepsGroup,
  stateGroup,
  eventsGroup,
  versionsGroup,
  historyGroup,
  payloadsGroup,
  hostileNamesGroup,
];

/** Every group of the suite, in the order they are registered. */
export const allGroups: readonly CaseGroup[] = [...storeGroups];
