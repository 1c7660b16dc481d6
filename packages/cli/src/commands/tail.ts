import type { StreamChunk } from '@cairn/core';
import type { CliCommand } from '../command.js';
import { safeJson, safeText } from '../render/safe-text.js';

/** `cairn tail <run-id> [--stream name]`: prints a run's stream chunks as they are written. */
export const tailCommand: CliCommand = {
  name: 'tail',
  register(program, cli) {
    program
      .command('tail')
      .description(
        "Print a run's stream chunks as they are written (engine.readStream), one line each, until the stream is closed or the run ends. Without --stream, every stream the run has when the command starts.",
      )
      .argument('<run-id>', 'the run')
      .option('--stream <name>', 'only this stream (waits for it while the run runs)')
      .option('--from <index>', 'start at this chunk index (with --stream; default 0)')
      .option('--json', 'print each chunk as one line of JSON: { stream, index, data, writtenAt }')
      .action(async (runId: string, options: { stream?: string; from?: string; json?: boolean }) => {
        const from = options.from === undefined ? 0 : Number(options.from);
        await cli.withConnection(async ({ engine }) => {
          const names = options.stream === undefined ? (await engine.listStreams(runId)).map((s) => s.stream) : [options.stream];
          if (names.length === 0) {
            cli.warn(`Run ${safeText(runId)} has no streams yet; pass --stream <name> to wait for one.`);
            return;
          }
          const print = (stream: string, chunk: StreamChunk) => {
            if (options.json) cli.io.stdout.write(`${safeJson({ stream, index: chunk.index, data: chunk.data, writtenAt: chunk.writtenAt }, 0)}\n`);
            else cli.print(`${names.length > 1 ? `${safeText(stream)} ` : ''}#${chunk.index} ${safeJson(chunk.data, 0)}`);
          };
          // Every stream at once: their chunks interleave as they come.
          await Promise.all(
            names.map(async (stream) => {
              for await (const chunk of engine.readStream(runId, stream, options.stream === undefined ? {} : { from })) print(stream, chunk);
            }),
          );
        });
      });
  },
};
