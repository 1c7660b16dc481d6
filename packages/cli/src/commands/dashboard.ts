import { Option } from 'commander';
import type { CliCommand } from '../command.js';
import { importBackend } from '../connect/backend.js';
import { intIn } from '../parse-options.js';

interface DashboardCommandOptions {
  host: string;
  port: number;
  token?: string;
  allowRemote?: boolean;
}

/** `cairn dashboard`: serves @cairn/dashboard over the configured store until interrupted. */
export const dashboardCommand: CliCommand = {
  name: 'dashboard',
  register(program, cli) {
    program
      .command('dashboard')
      .description('Serve the web dashboard (runs, timelines, cancel / retry / fork) over this store until Ctrl-C. Needs @cairn/dashboard.')
      .option('--host <address>', 'the address to listen on; anything but loopback needs --allow-remote and a token', '127.0.0.1')
      .addOption(new Option('-p, --port <port>', 'the TCP port (0: any free port)').default(4600).argParser(intIn(0, 65535)))
      .addOption(
        new Option('--token <token>', 'require this access token on every request (at least 16 characters for a remote host)').env('CAIRN_DASHBOARD_TOKEN'),
      )
      .option('--allow-remote', 'allow a non-loopback --host (with --token)')
      .addHelpText(
        'after',
        '\nExamples:\n  cairn dashboard --url sqlite:./cairn.sqlite\n  CAIRN_DASHBOARD_TOKEN=$(openssl rand -hex 16) cairn dashboard --host 0.0.0.0 --allow-remote',
      )
      .action(async (options: DashboardCommandOptions) => {
        const { startDashboard } = await importBackend({ title: 'dashboard', packages: '@cairn/dashboard' }, () => import('@cairn/dashboard'));
        await cli.withConnection(async ({ engine }) => {
          const dashboard = await startDashboard({
            engine,
            host: options.host,
            port: options.port,
            ...(options.token === undefined ? {} : { token: options.token }),
            ...(options.allowRemote ? { allowRemote: true } : {}),
          });
          cli.print(`Cairn dashboard on ${dashboard.url}  (Ctrl-C to stop)`);
          // Served until the process is told to stop; then the server and the store close.
          await new Promise<void>((resolve) => {
            process.once('SIGINT', resolve);
            process.once('SIGTERM', resolve);
          });
          await dashboard.close();
        });
      });
  },
};
