import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyWorkflowDefinition, PayloadCodec } from '@cairn/core';
import type { Queue, WorkflowStore } from '@cairn/core/backend';
import { CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';

/**
 * What a `cairn.config.ts` (or `.js`, `.mjs`, `.mts`) exports, as its default export or as named
 * exports: the store (or a function that opens it), and optionally the workflows, the queue the
 * workers use (so that `cancel`, `retry` and `fork` dispatch through the real queue) and the
 * payload codec the engines use (so that payloads read decoded; without it an encoded payload shows
 * as `encoded (key k1)`).
 */
export interface CairnConfig {
  store: WorkflowStore | (() => WorkflowStore | Promise<WorkflowStore>);
  workflows?: readonly AnyWorkflowDefinition[];
  queue?: Queue | (() => Queue | Promise<Queue>);
  codec?: PayloadCodec | (() => PayloadCodec | Promise<PayloadCodec>);
}

/** The file names looked for in the working directory, in this order. */
export const CONFIG_FILES = ['cairn.config.ts', 'cairn.config.mts', 'cairn.config.js', 'cairn.config.mjs'] as const;

/** The config file to use: `--config`, else the first of `CONFIG_FILES` in `cwd`, else undefined. */
export function findConfig(cwd: string, option: string | undefined): string | undefined {
  if (option !== undefined) {
    const path = resolve(cwd, option);
    if (!existsSync(path)) throw new CliError(EXIT.usage, `--config ${JSON.stringify(option)}: no such file`);
    return path;
  }
  for (const name of CONFIG_FILES) {
    const path = resolve(cwd, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

/**
 * Imports a module the user names (a config file, `cairn check --workflows`). TypeScript is loaded
 * through tsx's `tsImport` when tsx is installed, and otherwise by Node itself (type stripping, on
 * by default from Node 22.18 and 23.6, or the loader the user gave node), so a `cairn.config.ts`
 * works without a build step.
 */
export async function importModule(path: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(path).href;
  if (/\.[cm]?ts$/.test(path)) {
    let tsx: { tsImport: (specifier: string, parent: string) => Promise<unknown> } | undefined;
    try {
      tsx = (await import('tsx/esm/api')) as typeof tsx;
    } catch {
      tsx = undefined;
    }
    if (tsx) return (await tsx.tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
  return (await import(url)) as Record<string, unknown>;
}

const isStore = (value: unknown): value is WorkflowStore =>
  typeof value === 'object' &&
  value !== null &&
  ['runs', 'steps', 'state', 'history'].every((key) => typeof (value as Record<string, unknown>)[key] === 'object');

const isCodec = (value: unknown): value is PayloadCodec =>
  typeof value === 'object' && value !== null && typeof (value as PayloadCodec).encode === 'function' && typeof (value as PayloadCodec).decode === 'function';

/** Loads and checks a config file: a missing or malformed `store` (or `codec`) export is a usage error. */
export async function loadConfig(
  path: string,
): Promise<{ store: WorkflowStore; workflows: readonly AnyWorkflowDefinition[]; queue?: Queue; codec?: PayloadCodec }> {
  let module: Record<string, unknown>;
  try {
    module = await importModule(path);
  } catch (error) {
    throw new CliError(EXIT.usage, `Could not load ${path}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  const fromDefault = module['default'];
  const config = (typeof fromDefault === 'object' && fromDefault !== null && 'store' in fromDefault ? fromDefault : module) as Partial<CairnConfig>;
  const store = typeof config.store === 'function' ? await config.store() : config.store;
  if (!isStore(store))
    throw new CliError(EXIT.usage, `${path} must export a store: \`export default { store }\` (a WorkflowStore, or a function returning one)`);
  const workflows = config.workflows ?? [];
  if (!Array.isArray(workflows)) throw new CliError(EXIT.usage, `${path}: "workflows" must be an array of workflow definitions`);
  const queue = typeof config.queue === 'function' ? await config.queue() : config.queue;
  const codec = typeof config.codec === 'function' ? await config.codec() : config.codec;
  if (codec !== undefined && !isCodec(codec)) {
    throw new CliError(EXIT.usage, `${path}: "codec" must be a payload codec (encode and decode methods, e.g. aesGcmCodec({ keys, current }))`);
  }
  return { store, workflows, ...(queue === undefined ? {} : { queue }), ...(codec === undefined ? {} : { codec }) };
}
