import { createHash } from 'node:crypto';

// pg-boss quotes nothing it does not need to: `"pgboss"` and `pgboss` are one schema and one channel.
const REDUNDANTLY_QUOTED = /^"[a-z_][a-z0-9_]*"$/;

/**
 * The LISTEN/NOTIFY channel pg-boss 12 notifies when a job becomes ready on a queue of `schema`
 * (its `notifyChannelSql`: `'pgboss_'` and the first 24 hex digits of the SHA-224 of the schema
 * name). Guarantee: the same name pg-boss's senders use for that schema, computed without a round
 * trip; the payload of each notification is the queue's name.
 */
export function pgBossNotifyChannel(schema: string): string {
  const name = REDUNDANTLY_QUOTED.test(schema) ? schema.slice(1, -1) : schema;
  return `pgboss_${createHash('sha224').update(name, 'utf8').digest('hex').slice(0, 24)}`;
}
