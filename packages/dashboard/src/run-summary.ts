import type { RunRecord, RunStatus } from '@cairn/core';

/** A run as the runs table shows it: no input, output or state. */
export interface RunSummaryView {
  id: string;
  workflow: string;
  version: string;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
  parentRunId?: string;
  idempotencyKey?: string;
  cancelRequested?: boolean;
  wakeAt?: number;
  deadline?: number;
  /** The error's name, code and message (no stack, no data). */
  error?: BriefError;
}

/** An error as the table shows it: a record's or a summary's name, code and message. */
export interface BriefError {
  name?: string;
  code?: string;
  message: string;
}

/** The fields of a run record or of the engine's run summary that `toRunSummary` reads. */
type RunLike = Pick<RunRecord, 'id' | 'workflow' | 'version' | 'status' | 'createdAt' | 'updatedAt'> &
  Partial<Pick<RunRecord, 'parent' | 'idempotencyKey' | 'cancelRequested' | 'wakeAt' | 'deadline'>> & { parentRunId?: string; error?: BriefError };

function briefError(error: BriefError | undefined): BriefError | undefined {
  if (!error) return undefined;
  return { message: error.message, ...(error.name === undefined ? {} : { name: error.name }), ...(error.code === undefined ? {} : { code: error.code }) };
}

/**
 * Projects a run record (or the engine's run summary) onto what the table needs, dropping
 * payloads: a page of 100 runs must not carry 100 inputs.
 */
export function toRunSummary(run: RunLike): RunSummaryView {
  const parentRunId = run.parentRunId ?? run.parent?.runId;
  const error = briefError(run.error);
  return {
    id: run.id,
    workflow: run.workflow,
    version: run.version,
    status: run.status,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    ...(parentRunId === undefined ? {} : { parentRunId }),
    ...(run.idempotencyKey === undefined ? {} : { idempotencyKey: run.idempotencyKey }),
    ...(run.cancelRequested ? { cancelRequested: true } : {}),
    ...(run.wakeAt === undefined ? {} : { wakeAt: run.wakeAt }),
    ...(run.deadline === undefined ? {} : { deadline: run.deadline }),
    ...(error === undefined ? {} : { error }),
  };
}
