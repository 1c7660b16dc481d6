/** Number formatting for the tables. */
export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined || Number.isNaN(value)) return '–';
  if (!Number.isFinite(value)) return '∞';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Milliseconds, with precision that suits the magnitude. */
export function ms(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '–';
  if (value < 1) return `${fmt(value, 3)} ms`;
  if (value < 10) return `${fmt(value, 2)} ms`;
  if (value < 1000) return `${fmt(value, 1)} ms`;
  return `${fmt(value / 1000, 2)} s`;
}

/** Microseconds. */
export function us(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '–';
  if (value < 1) return `${fmt(value, 3)} µs`;
  if (value < 100) return `${fmt(value, 1)} µs`;
  return `${fmt(value, 0)} µs`;
}

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}
