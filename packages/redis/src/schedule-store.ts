import type { ScheduleRecord, ScheduleStore } from '@cairn/core/backend';
import type { StoreContext } from './context.js';

const parse = (text: unknown): ScheduleRecord => JSON.parse(String(text)) as ScheduleRecord;
const due = (s: ScheduleRecord): string => (s.dueAt === null ? '' : String(s.dueAt));

/** The `schedules` part: records in one hash, indexed by due time and by name (see `schedule-scripts.lua.ts`). */
export function createScheduleStore(ctx: StoreContext): ScheduleStore {
  const k = ctx.keys;
  const records = `${k.global}:schedules`;
  const dueIndex = `${k.global}:schedules:due`;
  const names = `${k.global}:schedules:names`;
  const read = async (mode: 'score' | 'lex', min: string, max: string, limit: number): Promise<ScheduleRecord[]> => {
    const reply = await ctx.caller.script(ctx.scripts.readSchedules, [records, mode === 'score' ? dueIndex : names], [mode, min, max, String(limit)]);
    return (Array.isArray(reply) ? reply : []).map(parse);
  };
  return {
    async create(schedule) {
      const record = { ...schedule, revision: 1 };
      const reply = (await ctx.caller.script(
        ctx.scripts.createSchedule,
        [records, dueIndex, names],
        [record.name, JSON.stringify(record), due(record)],
      )) as unknown[];
      return { schedule: parse(reply[1]), created: Number(reply[0]) === 1 };
    },
    async get(name) {
      const text = await ctx.caller.command('schedules.get', 'HGET', [records, name]);
      return text === null || text === undefined ? undefined : parse(text);
    },
    async list({ limit, after }) {
      return read('lex', after === undefined ? '-' : `(${after}`, '+', limit);
    },
    async update(schedule, expectedRevision) {
      const record = { ...schedule, revision: expectedRevision + 1 };
      const written = await ctx.caller.script(
        ctx.scripts.updateSchedule,
        [records, dueIndex],
        [record.name, String(expectedRevision), JSON.stringify(record), due(record)],
      );
      return Number(written) === 1 ? record : undefined;
    },
    async delete(name) {
      return Number(await ctx.caller.script(ctx.scripts.deleteSchedule, [records, dueIndex, names], [name])) === 1;
    },
    async findDue(now, limit) {
      return read('score', '-inf', String(now), limit);
    },
  };
}
