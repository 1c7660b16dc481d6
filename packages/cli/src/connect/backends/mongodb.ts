import type { WorkflowStore } from '@cairn/core/backend';
import { CliError } from '../../cli-error.js';
import { EXIT } from '../../exit-codes.js';
import type { UrlBackend } from '../backend.js';
import { importBackend } from '../backend.js';

/**
 * `mongodb://` and `mongodb+srv://`: `createMongoStore` of `@cairn/mongodb` over the `mongodb`
 * driver. The database is the URL's path (`mongodb://host/app`). The store owns the client here:
 * closing it closes the client.
 */
export const mongodbBackend: UrlBackend = {
  title: 'MongoDB',
  schemes: ['mongodb:', 'mongodb+srv:'],
  packages: '@cairn/mongodb mongodb',
  async open(url, options) {
    const database = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
    if (database === '') throw new CliError(EXIT.usage, `--url ${JSON.stringify(url)} names no database: add it as the path (mongodb://host:27017/app)`);
    const [{ MongoClient }, { createMongoStore }] = await importBackend(this, () => Promise.all([import('mongodb'), import('@cairn/mongodb')]));
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 10_000 });
    try {
      await client.connect();
      const store = createMongoStore({ db: client.db(database), ...(options.prefix === undefined ? {} : { collectionPrefix: options.prefix }) });
      await store.init();
      const owned: WorkflowStore = {
        ...store,
        async close() {
          await store.close();
          await client.close();
        },
      };
      return owned;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  },
};
