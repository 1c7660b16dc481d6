/** Where a process's provider setting came from, and its raw value. */
export interface ProviderSetting {
  /** The environment variable that was read. */
  variable: 'CAIRN_TEST_CONFORMANCE_PROVIDER' | 'CAIRN_TEST_PROVIDER';
  value: string | undefined;
}

// `node --test` runs each test file in a process of its own whose entry script is that file.
const CONFORMANCE_FILE = /\.conformance\.[cm]?[jt]s$/;

/**
 * The provider setting of this process: `CAIRN_TEST_CONFORMANCE_PROVIDER` when the process runs a
 * conformance file (`*.conformance.ts`) and that variable is set, `CAIRN_TEST_PROVIDER` otherwise.
 * It lets one `pnpm test` run the conformance suite in containers and every other test on local
 * servers (what CI does), without a second command.
 */
export function providerSetting(env: NodeJS.ProcessEnv, entry: string | undefined = process.argv[1]): ProviderSetting {
  const conformance = env['CAIRN_TEST_CONFORMANCE_PROVIDER'];
  if (conformance !== undefined && conformance !== '' && entry !== undefined && CONFORMANCE_FILE.test(entry)) {
    return { variable: 'CAIRN_TEST_CONFORMANCE_PROVIDER', value: conformance };
  }
  return { variable: 'CAIRN_TEST_PROVIDER', value: env['CAIRN_TEST_PROVIDER'] };
}
