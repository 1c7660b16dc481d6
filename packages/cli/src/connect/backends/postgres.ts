import type { UrlBackend } from '../backend.js';
import { importBackend } from '../backend.js';

/** `postgres://` and `postgresql://`: `@cairn/kysely/postgres` over `pg`. */
export const postgresBackend: UrlBackend = {
  title: 'PostgreSQL',
  schemes: ['postgres:', 'postgresql:'],
  packages: '@cairn/kysely kysely pg',
  async open(url, options) {
    const { openPostgresStore } = await importBackend(this, () => import('@cairn/kysely/postgres'));
    return openPostgresStore(url, { migrate: false, ...(options.prefix === undefined ? {} : { tablePrefix: options.prefix }) });
  },
};
