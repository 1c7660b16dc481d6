/**
 * Requests counted by the server itself, so every process that talks to it is included (worker
 * processes, their queue clients, the submitting client): PostgreSQL through pg_stat_statements,
 * Redis through INFO commandstats.
 */
export interface RequestCounts {
  total: number;
  /** The most frequent requests (normalised statement text or command name), most frequent first. */
  top: { request: string; count: number }[];
}

export interface RequestCounter {
  /** Zeroes the server's counters. */
  reset(): Promise<void>;
  /** What the server counted since the last reset (the counter's own requests left out). */
  read(): Promise<RequestCounts>;
  close(): Promise<void>;
}
