import type { Json } from './json.js';

/** An event delivered to a run. The first delivery of a name wins. */
export interface EventRecord {
  runId: string;
  name: string;
  payload: Json;
  deliveredAt: number;
}
