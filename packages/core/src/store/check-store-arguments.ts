import { withSlotArgumentChecks } from './check-slot-arguments.js';
import type { WorkflowStore } from './workflow-store.js';
import { checkedBulk } from './check-bulk-arguments.js';
import { checkedVersions, checkedSchedules } from './check-catalog-arguments.js';
import { checkedPauses } from './check-pause-arguments.js';
import { checkedState, checkedEvents, checkedStreams, checkedHistory } from './check-record-arguments.js';
import { checkedRuns } from './check-run-arguments.js';
import { checkedSteps } from './check-step-arguments.js';

// The parts' checks are in the check-*-arguments.ts files beside this one, one per part of the store.

/**
 * Returns `store` with every method of its parts (`runs`, `steps`, `state`, `events`, `versions`,
 * `history`, `schedules`, and `slots`, `pauses` and `bulk` when present) checking the runtime types of its arguments
 * first: ids, names and keys must be strings, fences integers (or `null` where the contract allows it), times and limits
 * finite numbers, records objects with fields of those types. A wrong type rejects with
 * `CairnError('INVALID_INPUT')` naming the operation and argument, before the backend sees
 * anything — so an operator object such as `{ $gt: '' }` can never reach a query filter, and a
 * backend never fails with an untyped `TypeError`. Payloads (JSON values) are not checked here:
 * the engine serialises them. Everything else on `store` (name, capabilities, `close`, and
 * backend extras such as `init`) is kept as it is.
 *
 * Only types are checked, not content: which strings an identifier may be is the engine's rule
 * (`checkIdentifier`), and a store keeps every string it is given exactly. Two exceptions, whose
 * values every backend compares: `NewRun.priority` must be an integer from -1000 to 1000, and
 * `slots` checks content too (see `withSlotArgumentChecks`).
 */
export function withArgumentChecks<S extends WorkflowStore>(store: S): S {
  // A copy of the store's own properties (getters stay getters: MongoDB's capabilities are
  // computed) on the same prototype, with the parts replaced; the copy spreads like the original.
  const part = (value: unknown): PropertyDescriptor => ({ value, enumerable: true, writable: true, configurable: true });
  return Object.create(Object.getPrototypeOf(store) as object | null, {
    ...Object.getOwnPropertyDescriptors(store),
    runs: part(checkedRuns(store.runs)),
    steps: part(checkedSteps(store.steps)),
    state: part(checkedState(store.state)),
    events: part(checkedEvents(store.events)),
    versions: part(checkedVersions(store.versions)),
    history: part(checkedHistory(store.history)),
    schedules: part(checkedSchedules(store.schedules)),
    // Optional while backends adopt it: a store without slots keeps none.
    ...(store.slots === undefined ? {} : { slots: part(withSlotArgumentChecks(store.slots)) }),
    ...(store.streams === undefined ? {} : { streams: part(checkedStreams(store.streams)) }),
    ...(store.pauses === undefined ? {} : { pauses: part(checkedPauses(store.pauses)) }),
    ...(store.bulk === undefined ? {} : { bulk: part(checkedBulk(store.bulk)) }),
  }) as S;
}
