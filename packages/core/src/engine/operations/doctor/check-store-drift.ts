import type { DoctorFinding } from '../../../store/store-doctor.js';
import type { DoctorContext } from './doctor-context.js';

/**
 * The backend's own checks, through the optional `WorkflowStore.doctor` hook (index drift and
 * the like: see each backend's docs). A store without the hook has none to run.
 */
export async function checkStoreDrift(ctx: DoctorContext): Promise<DoctorFinding[]> {
  if (typeof ctx.store.doctor !== 'function') return [];
  const result = await ctx.store.doctor({ fix: ctx.fix, now: ctx.now, limit: ctx.limits.runs });
  for (const name of result.truncated) ctx.truncated.add(`${ctx.store.name}: ${name}`);
  return result.findings;
}
