import { CairnError } from '../../errors/cairn-error.js';
import type { AnyWorkflowDefinition } from './workflow-context.js';
import { checkEventName, eventNameOf } from './event-definition.js';
import { checkWakeTime, toMilliseconds, type Duration } from './duration.js';
import { checkIdentifier, IDENTIFIER_LIMITS } from '../check-input.js';

export type { SelectAlternative, SelectChildValue, SelectOutcome, SelectResult } from './workflow-context.js';

/** An alternative after its arguments were checked. */
export type CheckedAlternative =
  | { key: string; kind: 'event'; event: string }
  | { key: string; kind: 'timer'; wakeAt: number }
  | { key: string; kind: 'child'; workflow: string; input: unknown };

/** At most this many alternatives: each costs a check per look at the select. */
export const MAX_SELECT_ALTERNATIVES = 16;

/**
 * Checks `ctx.select`'s alternatives (before anything is recorded) and fixes their order: the
 * order given, which also breaks ties when several are ready at one look.
 */
export function checkAlternatives(name: string, alternatives: unknown, now: number): CheckedAlternative[] {
  const what = `ctx.select(${JSON.stringify(name)})`;
  if (typeof alternatives !== 'object' || alternatives === null || Array.isArray(alternatives)) {
    throw new CairnError('INVALID_INPUT', `${what}: the alternatives must be an object of { key: alternative }`);
  }
  const entries = Object.entries(alternatives);
  if (entries.length === 0 || entries.length > MAX_SELECT_ALTERNATIVES) {
    throw new CairnError('INVALID_INPUT', `${what}: give 1 to ${MAX_SELECT_ALTERNATIVES} alternatives, got ${entries.length}`);
  }
  return entries.map(([key, alternative]): CheckedAlternative => {
    checkIdentifier(`${what} alternative key`, key, 100);
    const at = `${what} alternative ${JSON.stringify(key)}`;
    if (typeof alternative !== 'object' || alternative === null)
      throw new CairnError('INVALID_INPUT', `${at}: must be { event }, { timer }, { until } or { child, input }`);
    const fields = Object.keys(alternative);
    const has = (field: string) => fields.includes(field);
    if (has('event') && fields.length === 1)
      return { key, kind: 'event', event: checkEventName(`${at} event`, eventNameOf((alternative as { event: unknown }).event)) };
    if (has('timer') && fields.length === 1)
      return { key, kind: 'timer', wakeAt: now + toMilliseconds((alternative as { timer: Duration }).timer, `${at} timer`) };
    if (has('until') && fields.length === 1)
      return { key, kind: 'timer', wakeAt: checkWakeTime((alternative as { until: Date | number }).until, now, `${at} until`) };
    if (has('child') && fields.every((f) => f === 'child' || f === 'input')) {
      const child = (alternative as { child: AnyWorkflowDefinition | string }).child;
      const workflow = typeof child === 'string' ? child : child?.name;
      checkIdentifier(`${at} child`, workflow, IDENTIFIER_LIMITS.workflowName);
      return { key, kind: 'child', workflow, input: (alternative as { input?: unknown }).input ?? null };
    }
    throw new CairnError(
      'INVALID_INPUT',
      `${at}: must be exactly one of { event }, { timer }, { until } or { child, input }, got keys ${JSON.stringify(fields)}`,
    );
  });
}
