/**
 * The life of a worker child process, shared by the multi-process proof and the outage test: open
 * an engine, start it, say `{ ready: true }` to the driver, and stop (closing what was opened) on
 * `{ stop: true }`. A failure to start ends the process with exit code 1.
 */
import type { Engine } from '@cairn/core';

export function runWorkerProcess(open: () => Promise<{ engine: Engine; close(): Promise<void> }>): void {
  const main = async () => {
    const opened = await open();
    await opened.engine.start();
    process.on('message', (message) => {
      if (!(message as { stop?: boolean }).stop) return;
      void opened.close().then(() => process.exit(0));
    });
    process.send?.({ ready: true });
  };
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
