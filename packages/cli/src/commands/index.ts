import type { CliCommand } from '../command.js';
import { approveCommand } from './approve.js';
import { cancelCommand } from './cancel.js';
import { bulkCommand } from './bulk.js';
import { pauseCommand, resumeCommand } from './pause.js';
import { checkCommand } from './check.js';
import { dashboardCommand } from './dashboard.js';
import { deleteCommand } from './delete.js';
import { dispatchCommand } from './dispatch.js';
import { doctorCommand } from './doctor.js';
import { exportCommand } from './export.js';
import { forkCommand } from './fork.js';
import { graphCommand } from './graph.js';
import { pruneCommand } from './prune.js';
import { retryCommand } from './retry.js';
import { runsCommand } from './runs.js';
import { schedulesCommand } from './schedules.js';
import { showCommand } from './show.js';
import { tailCommand } from './tail.js';
import { versionsCommand } from './versions.js';

/** Every `cairn` command, in the order `cairn --help` lists them. A new command: one file, one line here. */
export const COMMANDS: readonly CliCommand[] = [
  runsCommand,
  showCommand,
  tailCommand,
  cancelCommand,
  pauseCommand,
  resumeCommand,
  retryCommand,
  forkCommand,
  deleteCommand,
  bulkCommand,
  pruneCommand,
  schedulesCommand,
  versionsCommand,
  checkCommand,
  exportCommand,
  graphCommand,
  approveCommand,
  doctorCommand,
  dashboardCommand,
  dispatchCommand,
];
