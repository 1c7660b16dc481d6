import type { UrlBackend } from '../backend.js';
import { importBackend } from '../backend.js';

/** `mysql://` and `mariadb://`: `@cairn/kysely/mysql` over `mysql2`. */
export const mysqlBackend: UrlBackend = {
  title: 'MySQL/MariaDB',
  schemes: ['mysql:', 'mariadb:'],
  packages: '@cairn/kysely kysely mysql2',
  async open(url, options) {
    const { openMysqlStore } = await importBackend(this, () => import('@cairn/kysely/mysql'));
    // mysql2 reads the URL's parts, not its scheme; `mariadb://` is the same server protocol.
    const uri = url.replace(/^mariadb:/, 'mysql:');
    return openMysqlStore(uri, { migrate: false, ...(options.prefix === undefined ? {} : { tablePrefix: options.prefix }) });
  },
};
