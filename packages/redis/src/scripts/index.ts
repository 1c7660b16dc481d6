import { CLAIM_CREATED, DROP_HINT, DUE_HINT, FORGET_RUN, LIST_VERSIONS, SET_VERSION_STATUS, SYNC_INDEX, UPSERT_VERSION } from './global-scripts.lua.js';
import {
  CLAIM_RUN,
  CREATE_RUN,
  DELETE_RUN,
  PAUSE_RUN,
  RENEW_LEASE,
  REOPEN_RUN,
  REQUEST_CANCEL,
  RESUME_RUN,
  SET_TAGS,
  TRANSITION_RUN,
  WAKE_RUN,
  PROMISE_WAKE,
  KEEP_PROMISE,
} from './run-scripts.lua.js';
import { luaScript, runScript, type IndexMode, type LuaScript } from './script.js';
import { CREATE_BULK, DELETE_BULK, READ_BULK, UPDATE_BULK } from './bulk-scripts.lua.js';
import { CREATE_SCHEDULE, DELETE_SCHEDULE, READ_SCHEDULES, UPDATE_SCHEDULE } from './schedule-scripts.lua.js';
import { ACQUIRE_SLOT, INSPECT_SLOT, RELEASE_SLOT, RENEW_SLOT } from './slot-scripts.lua.js';
import { APPEND_STREAM } from './stream-scripts.lua.js';
import { DELIVER_EVENT, INSERT_STEP, LOAD_HISTORY, LOAD_STEPS, SET_STATE, TRANSITION_STEP } from './step-scripts.lua.js';

/** Every script the store runs, built for one index mode. */
export interface Scripts {
  createRun: LuaScript;
  claimRun: LuaScript;
  renewLease: LuaScript;
  transitionRun: LuaScript;
  wakeRun: LuaScript;
  promiseWake: LuaScript;
  keepPromise: LuaScript;
  requestCancel: LuaScript;
  deleteRun: LuaScript;
  reopenRun: LuaScript;
  pauseRun: LuaScript;
  resumeRun: LuaScript;
  insertStep: LuaScript;
  transitionStep: LuaScript;
  setState: LuaScript;
  deliverEvent: LuaScript;
  appendStream: LuaScript;
  setTags: LuaScript;
  loadSteps: LuaScript;
  loadHistory: LuaScript;
  syncIndex: LuaScript;
  dueHint: LuaScript;
  dropHint: LuaScript;
  forgetRun: LuaScript;
  claimCreated: LuaScript;
  upsertVersion: LuaScript;
  setVersionStatus: LuaScript;
  listVersions: LuaScript;
  createSchedule: LuaScript;
  updateSchedule: LuaScript;
  deleteSchedule: LuaScript;
  readSchedules: LuaScript;
  createBulk: LuaScript;
  updateBulk: LuaScript;
  deleteBulk: LuaScript;
  readBulk: LuaScript;
  acquireSlot: LuaScript;
  renewSlot: LuaScript;
  releaseSlot: LuaScript;
  inspectSlot: LuaScript;
}

const cache = new Map<IndexMode, Scripts>();

/** The scripts for `mode` (built once per process). */
export function scriptsFor(mode: IndexMode): Scripts {
  let scripts = cache.get(mode);
  if (!scripts) {
    scripts = {
      createRun: runScript('createRun', CREATE_RUN, mode),
      claimRun: runScript('claimRun', CLAIM_RUN, mode),
      renewLease: runScript('renewLease', RENEW_LEASE, mode),
      transitionRun: runScript('transitionRun', TRANSITION_RUN, mode),
      wakeRun: runScript('wakeRun', WAKE_RUN, mode),
      promiseWake: runScript('promiseWake', PROMISE_WAKE, mode),
      keepPromise: runScript('keepPromise', KEEP_PROMISE, mode),
      requestCancel: runScript('requestCancel', REQUEST_CANCEL, mode),
      deleteRun: runScript('deleteRun', DELETE_RUN, mode),
      reopenRun: runScript('reopenRun', REOPEN_RUN, mode),
      pauseRun: runScript('pauseRun', PAUSE_RUN, mode),
      resumeRun: runScript('resumeRun', RESUME_RUN, mode),
      insertStep: runScript('insertStep', INSERT_STEP, mode),
      transitionStep: runScript('transitionStep', TRANSITION_STEP, mode),
      setState: runScript('setState', SET_STATE, mode),
      deliverEvent: runScript('deliverEvent', DELIVER_EVENT, mode),
      appendStream: runScript('appendStream', APPEND_STREAM, mode),
      setTags: runScript('setTags', SET_TAGS, mode),
      // Reads touch the run's slot only, whatever the mode.
      loadSteps: runScript('loadSteps', LOAD_STEPS, 'split'),
      loadHistory: runScript('loadHistory', LOAD_HISTORY, 'split'),
      syncIndex: luaScript('syncIndex', SYNC_INDEX),
      dueHint: luaScript('dueHint', DUE_HINT),
      dropHint: luaScript('dropHint', DROP_HINT),
      forgetRun: luaScript('forgetRun', FORGET_RUN),
      claimCreated: luaScript('claimCreated', CLAIM_CREATED),
      upsertVersion: luaScript('upsertVersion', UPSERT_VERSION),
      setVersionStatus: luaScript('setVersionStatus', SET_VERSION_STATUS),
      listVersions: luaScript('listVersions', LIST_VERSIONS),
      createSchedule: luaScript('createSchedule', CREATE_SCHEDULE),
      updateSchedule: luaScript('updateSchedule', UPDATE_SCHEDULE),
      deleteSchedule: luaScript('deleteSchedule', DELETE_SCHEDULE),
      readSchedules: luaScript('readSchedules', READ_SCHEDULES),
      createBulk: luaScript('createBulk', CREATE_BULK),
      updateBulk: luaScript('updateBulk', UPDATE_BULK),
      deleteBulk: luaScript('deleteBulk', DELETE_BULK),
      readBulk: luaScript('readBulk', READ_BULK),
      // Slot scripts touch one slot key's four keys only, whatever the mode.
      acquireSlot: luaScript('acquireSlot', ACQUIRE_SLOT),
      renewSlot: luaScript('renewSlot', RENEW_SLOT),
      releaseSlot: luaScript('releaseSlot', RELEASE_SLOT),
      inspectSlot: luaScript('inspectSlot', INSPECT_SLOT),
    };
    cache.set(mode, scripts);
  }
  return scripts;
}
