// Where the browser tests find Chromium: Debian's `chromium` package (`.ci/run` installs it),
// driven by playwright-core, which downloads no browser of its own.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** The Chromium binary: `CAIRN_TEST_CHROMIUM`, else Debian's `/usr/bin/chromium`. */
export const CHROMIUM = process.env['CAIRN_TEST_CHROMIUM'] ?? '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or `false` when they can. In CI (or with
 * `CAIRN_TEST_REQUIRE` set) a missing Chromium is an error, not a skip.
 */
export function chromiumMissing(): string | false {
  if (existsSync(CHROMIUM)) return false;
  const reason = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CAIRN_TEST_CHROMIUM)`;
  if (process.env['CI'] || process.env['CAIRN_TEST_REQUIRE']) throw new Error(`browser tests: ${reason}`);
  console.error(`[dashboard tests] skipped: ${reason}`);
  return reason;
}

/** Launches headless Chromium (one per test file). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}
