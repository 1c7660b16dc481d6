import { caseGroup, type CaseGroup } from '../case.js';
import { runClaimLeaseCases } from './runs/claim-lease.js';
import { runCreateCases } from './runs/create.js';
import { runDeleteCases } from './runs/delete.js';
import { runFindDueCases } from './runs/find-due.js';
import { runQueryCases } from './runs/queries.js';
import { runTransitionCases } from './runs/transitions.js';

/** Store contract: `runs`, one file per operation under `runs/`, in the order the cases always ran. */
export const runsGroup: CaseGroup = caseGroup('store.runs', 'store: runs', [
  ...runCreateCases,
  ...runQueryCases,
  ...runClaimLeaseCases,
  ...runTransitionCases,
  ...runFindDueCases,
  ...runDeleteCases,
]);
