import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, redisRequired } from './redis-server.js';

/** A local three-master Redis Cluster, or why there is none. */
export type TestCluster = { nodes: Array<{ host: string; port: number }>; stop(): Promise<void> } | { skip: string };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `CAIRN_TEST_REDIS_CLUSTER_NODES` (`host:port,host:port,...` of a running cluster) when set; else
 * starts three `redis-server --cluster-enabled yes` nodes on free ports and joins them with
 * `redis-cli --cluster create` (no replicas). Skips (or fails, when Redis is required) without the
 * binaries.
 */
export async function startLocalCluster(): Promise<TestCluster> {
  const fromEnv = process.env.CAIRN_TEST_REDIS_CLUSTER_NODES;
  if (fromEnv) {
    const nodes = fromEnv.split(',').map((entry) => {
      const [host, port] = entry.trim().split(':');
      return { host: host || '127.0.0.1', port: Number(port) };
    });
    return { nodes, stop: async () => {} };
  }
  if (spawnSync('redis-server', ['--version']).status !== 0 || spawnSync('redis-cli', ['--version']).status !== 0) {
    const reason = 'redis-server / redis-cli not on PATH: no local Redis Cluster';
    if (redisRequired()) throw new Error(`Redis is required (CAIRN_TEST_REQUIRE) but ${reason}`);
    console.log(`# @cairn/redis cluster tests skipped: ${reason}`);
    return { skip: reason };
  }
  const dir = await mkdtemp(join(tmpdir(), 'cairn-redis-cluster-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) {
      // The cluster bus listens on port + 10000: keep both free-ish by picking below 55535.
      let port = await freePort();
      while (port > 55_000) port = await freePort();
      ports.push(port);
      children.push(
        spawn(
          'redis-server',
          [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--save',
            '',
            '--appendonly',
            'no',
            '--dir',
            dir,
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `nodes-${port}.conf`,
            '--cluster-node-timeout',
            '2000',
          ],
          { stdio: 'ignore' },
        ),
      );
    }
    for (const port of ports) {
      for (let i = 0; ; i++) {
        const ok = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG';
        if (ok) break;
        if (i > 100) throw new Error(`cluster node :${port} did not start`);
        await sleep(30);
      }
    }
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (let i = 0; ; i++) {
      const states = ports.map((port) => spawnSync('redis-cli', ['-p', String(port), 'cluster', 'info'], { encoding: 'utf8' }).stdout);
      if (states.every((s) => s.includes('cluster_state:ok'))) break;
      if (i > 300) throw new Error('cluster did not reach cluster_state:ok');
      await sleep(50);
    }
    return { nodes: ports.map((port) => ({ host: '127.0.0.1', port })), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
