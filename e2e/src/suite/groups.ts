import { concurrentStateGroup } from './adversarial/concurrent-state.js';
import { crashPointsGroup } from './adversarial/crash-points.js';
import { deleteArtefactsGroup } from './adversarial/delete-artefacts.js';
import { duplicateDeliveryGroup } from './adversarial/duplicate-delivery.js';
import { falsyOutputsGroup } from './adversarial/falsy-outputs.js';
import { hostileArgumentsGroup } from './adversarial/hostile-arguments.js';
import { hostileIdentifiersInWorkflowsGroup } from './adversarial/hostile-identifiers-in-workflows.js';
import { hostileNamesEngineGroup } from './adversarial/hostile-names.js';
import { largePayloadsGroup } from './adversarial/large-payloads.js';
import { protoKeysGroup } from './adversarial/proto-keys.js';
import { racingClaimersGroup } from './adversarial/racing-claimers.js';
import { simulationGroup } from './adversarial/simulation.js';
import { checkPredictionGroup } from './adversarial/check-prediction.js';
import { graphFuzzGroup } from './adversarial/graph-fuzz.js';
import { staleFencesGroup } from './adversarial/stale-fences.js';
import { storeBudgetGroup } from './adversarial/store-budget.js';
import { terminalRacesGroup } from './adversarial/terminal-races.js';
import { undefinedInPayloadsGroup } from './adversarial/undefined-in-payloads.js';
import type { CaseGroup } from './case.js';
import { cancellationGroup } from './engine/cancellation.js';
import { cancelReachGroup } from './engine/cancel-reach.js';
import { pauseResumeGroup } from './engine/pause-resume.js';
import { bulkOperationsGroup } from './engine/bulk-operations.js';
import { storeQueueGroup } from './engine/store-queue.js';
import { pushedResultsGroup } from './engine/pushed-results.js';
import { schedulesGroup } from './engine/schedules.js';
import { flowControlGroup } from './engine/flow-control.js';
import { startsGroup } from './engine/starts.js';
import { deadlinesGroup } from './engine/deadlines.js';
import { doctorGroup } from './engine/doctor.js';
import { childrenGroup } from './engine/children.js';
import { codecGroup } from './engine/codec.js';
import { continueAsNewGroup } from './engine/continue-as-new.js';
import { selectGroup } from './engine/select.js';
import { eventsEngineGroup } from './engine/events.js';
import { failuresGroup } from './engine/failures.js';
import { recoveryGroup } from './engine/recovery.js';
import { retryRunGroup } from './engine/retry-run.js';
import { forkRunGroup } from './engine/fork-run.js';
import { retentionGroup } from './engine/retention.js';
import { findRunsGroup } from './engine/find-runs.js';
import { replayGroup } from './engine/replay.js';
import { retriesGroup } from './engine/retries.js';
import { sleepsGroup } from './engine/sleeps.js';
import { stateEngineGroup } from './engine/state.js';
import { streamsEngineGroup } from './engine/streams.js';
import { requestsGroup } from './engine/requests.js';
import { timelineGroup } from './engine/timeline.js';
import { versionsEngineGroup } from './engine/versions.js';
import { patchesGroup } from './engine/patches.js';
import { graphsGroup } from './engine/graphs.js';
import { eventsGroup } from './store/events.js';
import { historyGroup } from './store/history.js';
import { hostileArgumentsStoreGroup } from './store/hostile-arguments.js';
import { hostileNamesGroup } from './store/hostile-names.js';
import { payloadsGroup } from './store/payloads.js';
import { runsGroup } from './store/runs.js';
import { runOperationsGroup } from './store/run-operations.js';
import { slotsGroup } from './store/slots.js';
import { pausesGroup } from './store/pauses.js';
import { tagsGroup } from './store/tags.js';
import { tagsEngineGroup } from './engine/tags.js';
import { bulkGroup } from './store/bulk.js';
import { stateGroup } from './store/state.js';
import { stepsGroup } from './store/steps.js';
import { streamsGroup } from './store/streams.js';
import { finishedStepsGroup } from './store/finished-steps.js';
import { crashLoopGroup } from './engine/crash-loop.js';
import { versionsGroup } from './store/versions.js';

/** Layer 1: the store contract, noun by noun. */
export const storeGroups: readonly CaseGroup[] = [
  runsGroup,
  stepsGroup,
  finishedStepsGroup,
  stateGroup,
  eventsGroup,
  versionsGroup,
  historyGroup,
  payloadsGroup,
  hostileNamesGroup,
  hostileArgumentsStoreGroup,
  runOperationsGroup,
  slotsGroup,
  streamsGroup,
  pausesGroup,
  tagsGroup,
  bulkGroup,
];

/** Layer 2: engine scenarios over the store. */
export const engineGroups: readonly CaseGroup[] = [
  replayGroup,
  retriesGroup,
  failuresGroup,
  crashLoopGroup,
  sleepsGroup,
  eventsEngineGroup,
  childrenGroup,
  continueAsNewGroup,
  selectGroup,
  cancellationGroup,
  cancelReachGroup,
  pauseResumeGroup,
  bulkOperationsGroup,
  storeQueueGroup,
  pushedResultsGroup,
  deadlinesGroup,
  versionsEngineGroup,
  patchesGroup,
  stateEngineGroup,
  streamsEngineGroup,
  requestsGroup,
  timelineGroup,
  recoveryGroup,
  doctorGroup,
  retryRunGroup,
  forkRunGroup,
  retentionGroup,
  findRunsGroup,
  tagsEngineGroup,
  schedulesGroup,
  flowControlGroup,
  startsGroup,
  codecGroup,
  graphsGroup,
];

/** Layer 3: adversarial cases. */
export const adversarialGroups: readonly CaseGroup[] = [
  racingClaimersGroup,
  staleFencesGroup,
  duplicateDeliveryGroup,
  crashPointsGroup,
  terminalRacesGroup,
  concurrentStateGroup,
  falsyOutputsGroup,
  undefinedInPayloadsGroup,
  protoKeysGroup,
  hostileNamesEngineGroup,
  hostileArgumentsGroup,
  hostileIdentifiersInWorkflowsGroup,
  largePayloadsGroup,
  deleteArtefactsGroup,
  storeBudgetGroup,
  simulationGroup,
  checkPredictionGroup,
  graphFuzzGroup,
];

/** Every group of the suite, in the order they are registered. */
export const allGroups: readonly CaseGroup[] = [...storeGroups, ...engineGroups, ...adversarialGroups];
