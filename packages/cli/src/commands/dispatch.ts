import { importBackend } from '../connect/backend.js';
import type { CliCommand } from '../command.js';
import { CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';
import { safeText } from '../render/safe-text.js';

interface DispatchCommandOptions {
  target: string;
  secretEnv: string;
  concurrency: string;
  timeout: string;
  retries: string;
  poll: string;
  limit: string[];
}

/** `--limit workflow=N`, repeatable: at most N pushes of that workflow in flight. */
const parseLimit = (value: string, previous: string[] = []): string[] => [...previous, value];

function workflowLimits(values: readonly string[]): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const value of values) {
    const at = value.lastIndexOf('=');
    const workflow = at > 0 ? value.slice(0, at) : '';
    if (workflow === '') throw new CliError(EXIT.usage, `--limit takes workflow=N, got ${JSON.stringify(value)}`);
    if (workflow in limits) throw new CliError(EXIT.usage, `--limit names ${JSON.stringify(workflow)} twice`);
    limits[workflow] = positiveInteger(`--limit ${workflow}`, value.slice(at + 1));
  }
  return limits;
}

const positiveInteger = (name: string, value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(EXIT.usage, `${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
};

/**
 * `cairn dispatch --url <store> --target <url> --secret-env NAME`: pushes due work to a serverless
 * push handler (`@cairn/http`) until stopped (SIGINT, SIGTERM). See docs/serverless.md.
 */
export const dispatchCommand: CliCommand = {
  name: 'dispatch',
  register(program, cli) {
    program
      .command('dispatch')
      .description(
        'Push due runs to a serverless push handler (@cairn/http) until stopped: signed POSTs with concurrency, retries with backoff, one push per due run across several dispatchers.',
      )
      .requiredOption('--target <url>', "the push handler's URL")
      .requiredOption('--secret-env <name>', 'the environment variable holding the signing secret (several: separated by spaces)')
      .option('--concurrency <n>', 'pushes in flight at most', '8')
      .option('--timeout <ms>', 'how long a push may take before it is retried', '60000')
      .option('--retries <n>', 'retries of a push that failed with a 5xx, a timeout or a network error', '5')
      .option('--poll <ms>', 'how often the store is looked at without a signal', '1000')
      .option('--limit <workflow=N>', 'at most N pushes of the workflow in flight, across every dispatcher given the same limit (repeatable)', parseLimit, [])
      .action(async (options: DispatchCommandOptions) => {
        const secret = cli.io.env[options.secretEnv];
        if (secret === undefined || secret.trim() === '') throw new CliError(EXIT.usage, `The environment variable ${options.secretEnv} is not set`);
        const { createDispatcher } = await importBackend({ title: 'dispatch', packages: '@cairn/http' }, () => import('@cairn/http'));
        const settings = {
          concurrency: positiveInteger('--concurrency', options.concurrency),
          pushTimeoutMs: positiveInteger('--timeout', options.timeout),
          retries: positiveInteger('--retries', options.retries),
          pollIntervalMs: positiveInteger('--poll', options.poll),
          workflowLimits: workflowLimits(options.limit),
        };
        await cli.withConnection(async ({ store }) => {
          const dispatcher = createDispatcher({
            store,
            target: options.target,
            secrets: secret.trim().split(/\s+/),
            ...settings,
            onEvent: (event) => {
              if (event.type === 'gave-up') cli.warn(`gave up pushing ${safeText(JSON.stringify(event.unit))}: ${safeText(event.reason)}`);
              else if (event.type === 'error') cli.warn(`dispatch error: ${safeText(String(event.error))}`);
            },
          });
          await dispatcher.start();
          cli.print(`Dispatching to ${safeText(options.target)}  (Ctrl-C to stop)`);
          await new Promise<void>((resolve) => {
            process.once('SIGINT', resolve);
            process.once('SIGTERM', resolve);
          });
          await dispatcher.stop();
        });
      });
  },
};
