import type { WorkflowStore } from '@cairn/core/backend';
import { CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';
import type { BackendOptions } from './backend.js';
import { URL_BACKENDS } from './backends/index.js';

/** Opens the store a `--url` names, through the backend that answers its scheme. */
export async function openUrl(url: string, options: BackendOptions): Promise<WorkflowStore> {
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0]?.toLowerCase();
  const backend = URL_BACKENDS.find((b) => scheme !== undefined && b.schemes.includes(scheme));
  if (!backend) {
    const known = URL_BACKENDS.flatMap((b) => b.schemes.map((s) => `${s}${s === 'sqlite:' ? '<path>' : '//'}`)).join(', ');
    throw new CliError(EXIT.usage, `--url ${JSON.stringify(url)}: unknown scheme; use one of ${known}`);
  }
  return backend.open(url, options);
}
