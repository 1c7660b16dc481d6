import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AnyWorkflowDefinition } from '@cairn/core';
import { CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';
import { safeText } from '../render/safe-text.js';
import { importModule } from './load-config.js';

/** What `defineWorkflow` returns, as far as a check needs it: a name, a version and a handler. */
function isDefinition(value: unknown): value is AnyWorkflowDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const def = value as Partial<AnyWorkflowDefinition>;
  return typeof def.name === 'string' && typeof def.version === 'string' && typeof def.handler === 'function';
}

/**
 * The workflow definitions a candidate build's module exports (`cairn check --workflows`): every
 * named export that is one, and the items of a default export array (or a default export that is
 * one). The same definition exported twice counts once. A usage error, before any store is opened,
 * when the module is missing or does not load, when it exports none, when an item of its default
 * array is not one, or when two different definitions share a name and version.
 */
export async function loadWorkflows(path: string, cwd: string): Promise<AnyWorkflowDefinition[]> {
  const file = resolve(cwd, path);
  const shown = safeText(path);
  if (!existsSync(file)) throw new CliError(EXIT.usage, `--workflows ${shown}: no such file`);
  let module: Record<string, unknown>;
  try {
    module = await importModule(file);
  } catch (error) {
    throw new CliError(EXIT.usage, `--workflows ${shown} did not load: ${safeText((error as Error)?.message ?? String(error))}`, { cause: error });
  }
  const found: AnyWorkflowDefinition[] = [];
  const fromDefault = module['default'];
  if (Array.isArray(fromDefault)) {
    for (const [i, item] of fromDefault.entries()) {
      if (!isDefinition(item))
        throw new CliError(EXIT.usage, `--workflows ${shown}: item ${i} of the default export is not a workflow definition (defineWorkflow)`);
      found.push(item);
    }
  }
  for (const value of Object.values(module)) if (isDefinition(value)) found.push(value);
  const unique = [...new Set(found)];
  if (unique.length === 0) {
    throw new CliError(
      EXIT.usage,
      `--workflows ${shown} exports no workflow definition: export each one made by defineWorkflow (export const signup = defineWorkflow(...)) or a default array of them`,
    );
  }
  const seen = new Map<string, AnyWorkflowDefinition>();
  for (const def of unique) {
    const id = JSON.stringify([def.name, def.version]);
    if (seen.has(id))
      throw new CliError(EXIT.usage, `--workflows ${shown} exports two definitions of workflow ${safeText(def.name)} version ${safeText(def.version)}`);
    seen.set(id, def);
  }
  return unique;
}
