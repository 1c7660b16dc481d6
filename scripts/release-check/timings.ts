// Phases with their durations, printed as they end and summarised at the end.
import { seconds } from './exec.js';

interface Phase {
  name: string;
  ms: number;
  ok: boolean;
}

export class Timings {
  readonly #phases: Phase[] = [];
  readonly #started = Date.now();

  /** Runs `fn` as a named phase; prints its start, end and duration; rethrows its error. */
  async phase<T>(name: string, fn: () => Promise<T>): Promise<T> {
    console.log(`\n=== [release:check] ${name}`);
    const started = Date.now();
    try {
      const value = await fn();
      this.#record(name, started, true);
      return value;
    } catch (error) {
      this.#record(name, started, false);
      throw error;
    }
  }

  #record(name: string, started: number, ok: boolean): void {
    const ms = Date.now() - started;
    this.#phases.push({ name, ms, ok });
    console.log(`=== [release:check] ${name}: ${ok ? 'ok' : 'FAILED'} in ${seconds(ms)}`);
  }

  /** The summary table: one line per phase and the total. */
  summary(): string {
    const lines = this.#phases.map((p) => `${seconds(p.ms).padStart(8)}  ${p.ok ? '' : 'FAILED  '}${p.name}`);
    lines.push(`${seconds(Date.now() - this.#started).padStart(8)}  total`);
    return lines.join('\n');
  }
}
