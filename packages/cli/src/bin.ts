#!/usr/bin/env node
// The `cairn` executable. See `cairn --help`, and docs/operating.md for every command.
import { runCli } from './run-cli.js';

// `cairn runs | head`: a reader that went away is not an error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });
// A client the user's config opened (a queue) may keep the event loop alive: leave after a grace
// period, once stdout has drained.
setTimeout(() => process.exit(), 2000).unref();
