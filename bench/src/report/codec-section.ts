import type { BackendReport } from '../results.js';
import { fmt, ms, table, us } from './format.js';

/** The payload codec's cost per step (`--scenarios=codec`), as Markdown; empty when it was not measured. */
export function codecSection(backends: readonly BackendReport[]): string[] {
  const measured = backends.filter((b) => b.codec);
  if (measured.length === 0) return [];
  const c0 = measured[0]!.codec!;
  return [
    `### Payload codec (${c0.codec}): cost per step (${c0.runs} sequential inline runs of ${c0.steps} steps per repetition, ${c0.reps} repetitions, off and on alternating)`,
    '',
    table(
      [
        'backend',
        'CPU per step, off → on',
        'added CPU',
        'wall per step, off → on',
        'added wall',
        `replay read of ${c0.steps} steps, off → on`,
        'step output stored',
      ],
      measured.map((b) => {
        const x = b.codec!;
        return [
          b.title,
          `${us(x.off.cpuUsPerStep)} → ${us(x.on.cpuUsPerStep)}`,
          us(x.addedCpuUsPerStep),
          `${us(x.off.wallUsPerStep)} → ${us(x.on.wallUsPerStep)}`,
          us(x.addedWallUsPerStep),
          `${ms(x.off.replayReadMs)} → ${ms(x.on.replayReadMs)}`,
          `${fmt(x.payloadBytes, 0)} → ${fmt(x.encodedBytes, 0)} bytes`,
        ];
      }),
    ),
    '',
    "Each step returns a ~200-byte object; with the codec the engine encrypts it before the write (AES-256-GCM, node:crypto, a fresh IV each) and the store keeps the envelope. CPU is `process.cpuUsage()` of the bench process over all repetitions (client side: the server's CPU is not included; SQLite runs in-process); wall time is the median repetition. The replay read is one `steps.load` of a finished run, through the codec (it decrypts every output) or not. See docs/encryption.md.",
    '',
  ];
}
