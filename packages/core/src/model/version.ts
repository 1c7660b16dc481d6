import type { Json } from './json.js';

/** Whether new runs may start on a version. Runs already pinned to it always replay on it. */
export type VersionStatus = 'active' | 'retired';

/** A registered (workflow, version). */
export interface VersionRecord {
  workflow: string;
  version: string;
  status: VersionStatus;
  /** What the engine knows of the definition (e.g. its options); free-form JSON. */
  descriptor: Json;
  createdAt: number;
  updatedAt: number;
}
