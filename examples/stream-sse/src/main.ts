// `pnpm start`: a story run on a SQLite file and the SSE server on port 3000 (or PORT).
// Open http://localhost:3000/runs/<id>/streams/tokens in a browser, or `curl -N` it.
import { createEngine } from '@cairn/core';
import { openSqliteStore } from '@cairn/kysely';
import { createSseServer } from './sse-server.js';
import { story } from './workflows.js';

const store = await openSqliteStore(process.env.CAIRN_SQLITE ?? 'stream-sse.sqlite', { migrate: true });
const engine = createEngine({ store, workflows: [story] });
await engine.start();
const run = await engine.startRun(story, { count: 20, pauseMs: 500 });
const { server } = createSseServer(engine);
const port = Number(process.env.PORT ?? 3000);
server.listen(port, () => console.log(`curl -N http://localhost:${port}/runs/${run.id}/streams/tokens`));
