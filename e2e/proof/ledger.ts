/**
 * The ledger of the proof's limited runs: every worker process appends a line when a step body
 * starts and when it ends, to a file of its own outside the store, so what the judge reads does not
 * depend on the store being right.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A record of a step body starting or ending, as one tab-separated ledger line. */
export interface LedgerEntry {
  event: 'start' | 'end';
  runId: string;
  tenant: string;
  step: string;
  pid: number;
  /** `performance.timeOrigin + performance.now()`: milliseconds comparable across processes. */
  at: number;
  /** On an end: the body's signal had fired (its execution lost its lease or slot, or ended). */
  aborted?: boolean;
}

/** One execution of a step body; `end` is absent while it runs, or when its process died in it. */
export interface Body {
  runId: string;
  tenant: string;
  step: string;
  pid: number;
  start: number;
  end?: number;
  /** The body ended after its signal fired. */
  aborted?: boolean;
}

/** Milliseconds since the epoch with sub-millisecond precision, comparable between processes. */
export function crossProcessNow(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Appends one entry to the ledger of its process (`ledger-<pid>.tsv` in `ledgerDir`). The write is
 * synchronous: the line is with the kernel before the body goes on, so a SIGKILL afterwards loses
 * nothing written.
 */
export function appendLedger(ledgerDir: string, entry: LedgerEntry): void {
  const line = [entry.event, entry.runId, entry.tenant, entry.step, entry.pid, entry.at.toFixed(3), entry.aborted ? 'aborted' : ''].join('\t');
  appendFileSync(join(ledgerDir, `ledger-${entry.pid}.tsv`), `${line}\n`);
}

/** Every entry of every worker's ledger in `ledgerDir`, each file in the order it was written. */
export function readLedgers(ledgerDir: string): LedgerEntry[] {
  const entries: LedgerEntry[] = [];
  for (const file of readdirSync(ledgerDir)) {
    if (!file.startsWith('ledger-')) continue;
    for (const line of readFileSync(join(ledgerDir, file), 'utf8').split('\n')) {
      const [event, runId, tenant, step, pid, at, note] = line.split('\t');
      // A line cut short (none is expected: appendFileSync writes a line in one call) is skipped.
      if ((event !== 'start' && event !== 'end') || at === undefined) continue;
      entries.push({ event, runId: runId!, tenant: tenant!, step: step!, pid: Number(pid), at: Number(at), aborted: note === 'aborted' });
    }
  }
  return entries;
}

/**
 * Pairs each start with the next end of the same run, step and process. An end without a start
 * is returned apart (`strayEnds`): it would mean a ledger lost a line.
 */
export function pairBodies(entries: LedgerEntry[]): { bodies: Body[]; strayEnds: LedgerEntry[] } {
  const bodies: Body[] = [];
  const strayEnds: LedgerEntry[] = [];
  const open = new Map<string, Body[]>();
  for (const e of entries) {
    const id = `${e.runId}\t${e.step}\t${e.pid}`;
    const list = open.get(id) ?? [];
    open.set(id, list);
    if (e.event === 'start') {
      const body: Body = { runId: e.runId, tenant: e.tenant, step: e.step, pid: e.pid, start: e.at };
      bodies.push(body);
      list.push(body);
    } else {
      const body = list.shift();
      if (body) {
        body.end = e.at;
        body.aborted = e.aborted === true;
      } else strayEnds.push(e);
    }
  }
  return { bodies, strayEnds };
}
