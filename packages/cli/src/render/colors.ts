import picocolors from 'picocolors';

/** The colour functions a renderer uses; identity functions when colour is off. */
export type Colors = ReturnType<typeof picocolors.createColors>;

/**
 * Whether to colour output: `NO_COLOR` (set and non-empty) turns colour off, `FORCE_COLOR` (set and
 * not `0`/`false`) turns it on, otherwise only when stdout is a terminal that is not `dumb`.
 * The `--no-color` option wins over all of them.
 */
export function colorEnabled(env: NodeJS.ProcessEnv, isTTY: boolean, option?: boolean): boolean {
  if (option === false) return false;
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  const force = env['FORCE_COLOR'];
  if (force !== undefined) return force !== '0' && force !== 'false';
  return isTTY && env['TERM'] !== 'dumb';
}

/** Colour functions, on or off. */
export function colors(enabled: boolean): Colors {
  return picocolors.createColors(enabled);
}
