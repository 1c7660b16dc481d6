import { invalidInput } from '../engine/check-input.js';
import type { ScheduleDefinition } from './define-schedule.js';
import { checkScheduleOptions } from './define-schedule.js';

/**
 * Checks `createEngine({ schedules })`: an array of definitions (plain options are checked as
 * `defineSchedule` would), each starting a registered workflow, names unique. Returns them by
 * name; throws `INVALID_INPUT`.
 */
export function checkDeclaredSchedules(value: unknown, registers: (workflow: string) => boolean): Map<string, ScheduleDefinition> {
  const byName = new Map<string, ScheduleDefinition>();
  if (value === undefined) return byName;
  if (!Array.isArray(value)) throw invalidInput('createEngine schedules', 'must be an array of defineSchedule definitions', value);
  for (const item of value) {
    // Re-checked even when made by defineSchedule: the array may hold any object at run time.
    const { computeInput, ...rest } = (typeof item === 'object' && item !== null ? item : { item }) as Partial<ScheduleDefinition>;
    const def = checkScheduleOptions('createEngine schedules[]', computeInput === undefined ? item : { ...rest, input: computeInput }, true);
    if (!registers(def.workflow)) throw invalidInput('createEngine schedules[] workflow', "is not one of the engine's workflows", def.workflow);
    if (byName.has(def.name)) throw invalidInput('createEngine schedules[] name', 'is declared twice', def.name);
    byName.set(def.name, def);
  }
  return byName;
}
