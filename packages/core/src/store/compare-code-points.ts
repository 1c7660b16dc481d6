/**
 * Compares two strings by Unicode code point, which is the order of their UTF-8 bytes: the order
 * PostgreSQL (`COLLATE "C"`), Redis and MongoDB give strings. JavaScript's `<` compares UTF-16
 * code units instead, which puts U+E000..U+FFFF after the characters beyond the BMP. Returns a
 * negative number, 0 or a positive number, as `Array.prototype.sort` expects.
 */
export function compareCodePoints(a: string, b: string): number {
  const x = a[Symbol.iterator]();
  const y = b[Symbol.iterator]();
  for (;;) {
    const p = x.next();
    const q = y.next();
    if (p.done || q.done) return (p.done ? 0 : 1) - (q.done ? 0 : 1);
    const d = p.value.codePointAt(0)! - q.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}
