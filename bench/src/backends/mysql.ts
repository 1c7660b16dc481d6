import { createMysqlDatabase } from '@cairn/conformance/services';
import { RoundTripCounter } from '../instrument/round-trips.js';
import { openKyselyStore } from './kysely-common.js';
import { mysqlDb } from './sql-drivers.js';
import type { BackendAdapter, BackendInstance } from './types.js';

/** MariaDB (the MySQL protocol) through `@cairn/kysely` + mysql2, from the test service provider. */
export const mysqlBackend: BackendAdapter = {
  name: 'mysql',
  title: 'MariaDB',
  async setup(ctx): Promise<BackendInstance> {
    const server = await ctx.servers.service('mysql');
    const url = await createMysqlDatabase(server.url, `cairn_bench_${process.pid}`);
    const counter = new RoundTripCounter();
    return {
      name: 'mysql',
      title: server.product.startsWith('MySQL') ? 'MySQL' : 'MariaDB',
      server: `${server.product} (${server.durability})`,
      driverCounted: true,
      counter,
      openStore: () => openKyselyStore({ dialect: 'mysql', counter, counted: () => mysqlDb(url, counter), uncounted: () => mysqlDb(url) }),
      async close() {},
    };
  },
};
