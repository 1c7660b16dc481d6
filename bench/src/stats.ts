/** Small statistics and timing helpers. Times are in milliseconds (fractional). */

/** A monotonic timestamp in milliseconds. */
export function nowMs(): number {
  return performance.now();
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Linear-interpolated percentile (`p` in 0..100) of a sample; NaN for an empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (rank - lo);
}

export function max(values: readonly number[]): number {
  // biome-ignore lint/complexity/useMathMinMax: a NaN sample is passed over here, where Math.max would make the maximum NaN
  return values.reduce((m, v) => (v > m ? v : m), Number.NEGATIVE_INFINITY);
}

/** Every value equal? (Round-trip counts of a deterministic scenario must not vary.) */
export function allEqual(values: readonly number[]): boolean {
  return values.every((v) => v === values[0]);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `fn` `warmup` times untimed, then `reps` times, returning each timed result. */
export async function repeat<T>(warmup: number, reps: number, fn: (index: number) => Promise<T>): Promise<T[]> {
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const out: T[] = [];
  for (let i = 0; i < reps; i++) out.push(await fn(i));
  return out;
}
