// Run data (names, outputs, errors, state) is written by workflow code and by whoever sends
// events: it must reach the terminal as text, never as control sequences (ANSI escapes can move
// the cursor, rewrite earlier lines, set the window title or hide text).

// C0 controls, DEL, C1 controls (U+0080-U+009F: a terminal may take U+009B as CSI), and the
// bidirectional overrides and isolates that reorder what is displayed.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

// What JSON.stringify leaves raw: everything above but the C0 controls (escaped in strings; the
// newlines between members are layout).
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every control or reordering character shown as an escape (`\x1b`, `\n`, `\u202e`). */
export function safeText(text: string): string {
  return text.replace(UNSAFE, (ch) => {
    const named = NAMED[ch];
    if (named) return named;
    const code = ch.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON for a terminal or a pipe: `JSON.stringify` escapes C0 controls itself; the C1 controls and
 * the reordering characters it leaves raw are escaped as `\uXXXX`, which parses back to the same value.
 */
export function safeJson(value: unknown, indent = 2): string {
  return (JSON.stringify(value, null, indent) ?? 'null').replace(UNSAFE_IN_JSON, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
