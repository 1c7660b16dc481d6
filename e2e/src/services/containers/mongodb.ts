import type { BackendContainer } from './common.js';

/**
 * A MongoDB-protocol server in a plain `GenericContainer`, not `@testcontainers/mongodb`: that
 * module starts mongod as a replica set and checks it with `mongosh` inside the container
 * (`rs.initiate()`), which only a real MongoDB image can do, while the project's CI can only build
 * FerretDB (no MongoDB build can be had there; see docs/testing.md). The MongoDB store needs no
 * replica set (one atomic document update per transition, no transactions), so the same code
 * starts the official `mongo` image (standalone) and the FerretDB stand-in: port 27017, ready
 * when it is listening and answers `ping`.
 */
export const mongodbContainer: BackendContainer = {
  async start(image, timeoutMs) {
    const { GenericContainer, Wait } = await import('testcontainers');
    // FerretDB keeps its SQLite files in /state: on a tmpfs its writes skip the disk's fsync (2-3x
    // faster per write, measured; the data is thrown away), as the other servers run without a
    // flush per commit. The official mongo image has no /state: the mount is unused there.
    const c = await new GenericContainer(image)
      .withExposedPorts(27017)
      .withTmpFs({ '/state': 'rw' })
      .withWaitStrategy(Wait.forListeningPorts())
      .withStartupTimeout(timeoutMs)
      .start();
    // Reached through a published port: connect directly, never by a replica set's member names.
    const url = `mongodb://${c.getHost()}:${c.getMappedPort(27017)}/?directConnection=true`;
    return { url, id: c.getId().slice(0, 12), stop: async () => void (await c.stop()) };
  },
  async describe(url) {
    const { MongoClient } = await import('mongodb');
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
    try {
      await client.connect();
      await client.db('admin').command({ ping: 1 });
      const info = await client.db('admin').command({ buildInfo: 1 });
      const wire = String(info['version']);
      if (info['ferretdbVersion'] === undefined) return { version: wire, label: `MongoDB ${wire}` };
      // FerretDB embedded as a Go module reports its version as "unknown" (FerretDB#2982).
      const version = String(info['ferretdbVersion']).replace(/^v/, '');
      return version === 'unknown'
        ? { version: wire, label: `FerretDB (MongoDB ${wire} wire protocol)` }
        : { version, label: `FerretDB ${version} (MongoDB ${wire} wire protocol)` };
    } finally {
      await client.close();
    }
  },
};
