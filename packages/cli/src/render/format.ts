import { describeEncoded } from '@cairn/core/backend';
import { safeText } from './safe-text.js';

/** A duration for people: `850 ms`, `3.42 s`, `2 min 5 s`, `3 h 20 min`, `2 d 4 h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const abs = Math.max(0, ms);
  if (abs < 1000) return `${Math.round(abs)} ms`;
  if (abs < 60_000) return `${(abs / 1000).toFixed(2)} s`;
  const s = Math.round(abs / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  const m = Math.round(s / 60);
  if (m < 24 * 60) return `${Math.floor(m / 60)} h ${m % 60} min`;
  const h = Math.round(m / 60);
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** An epoch-ms time in UTC, `2026-12-03 12:00:01.234Z`. */
export function formatTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11)}`;
}

/** A short UTC time for tables, `12-03 12:00:01`. */
export function formatShortTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(5, 10)} ${iso.slice(11, 19)}`;
}

/** Run data made safe for a terminal and cut to `width` characters (with `…`). */
export function cell(text: string, width: number): string {
  const safe = [...safeText(text)];
  if (safe.length <= width) return safe.join('') + ' '.repeat(width - safe.length);
  return `${safe.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** Run data made safe and cut to at most `width` characters, without padding. */
export function clip(text: string, width: number): string {
  return cell(text, width).trimEnd();
}

/**
 * A JSON value on one line, made safe for a terminal; a payload encoded by a codec the CLI was not
 * given (see the config file's `codec`) as `encoded (key k1)`.
 */
export function inlineJson(value: unknown): string {
  const encoded = describeEncoded(value);
  return safeText(encoded ?? JSON.stringify(value) ?? 'undefined');
}

/** Text made safe and broken into lines of at most `width` characters, at spaces where it can. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of safeText(text).split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = '';
    }
    line = line === '' ? word : `${line} ${word}`;
    while (line.length > width) {
      lines.push(line.slice(0, width));
      line = line.slice(width);
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Tags as `key=value` pairs, space-separated, each escaped as run data (`cairn runs --tag` takes the same form). */
export function formatTags(tags: Record<string, string>): string {
  return Object.keys(tags)
    .map((key) => `${safeText(key)}=${safeText(tags[key] as string)}`)
    .join(' ');
}
