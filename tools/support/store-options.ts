/**
 * The options every command shares (`--config FILE`, `--data DIR`) and opening the store they
 * name, through the same loadConfig/openStore as `serve`, so each command works against any store
 * a configuration file names.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../lib/config/config.js';
import { openStore } from '../../lib/store/open-store.js';
import type { Store } from '../../lib/store/store.js';
import { CliError } from './cli-error.js';

export interface StoreFlags {
  readonly config?: string;
  readonly data?: string;
}

export interface OpenedStore {
  readonly config: Config;
  readonly store: Store;
}

/**
 * Loads the configuration and opens its store. Unless `create`, a missing embedded data directory
 * is an error rather than silently created empty (an empty directory would also stop `serve` from
 * seeding the demo data).
 */
export async function openConfiguredStore(flags: StoreFlags, options: { readonly create: boolean }): Promise<OpenedStore> {
  const config = loadConfig({ config: flags.config, data: flags.data });
  if (config.store.kind === 'lmdb') checkDataPath(config.store.path, options.create);
  const store = await openStore(config.store);
  return { config, store };
}

/**
 * A mistyped --data must not become a new empty store: a command that only reads refuses a folder
 * without data.mdb (LMDB's data file) rather than creating one there and printing nothing, and a
 * file is named as such rather than as mkdir's EEXIST.
 */
export function checkDataPath(path: string, create: boolean): void {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat !== undefined && !stat.isDirectory()) throw new CliError(`data directory ${path} is a file, not a directory: check --data (or store.path)`);
  if (create) return;
  if (stat === undefined) {
    throw new CliError(`data directory ${path} does not exist (rowgate serve creates one with demo data, rowgate create-table an empty one)`);
  }
  if (!existsSync(join(path, 'data.mdb'))) {
    throw new CliError(`data directory ${path} holds no rowgate store (no data.mdb): check --data (or store.path); rowgate create-table makes a store in it`);
  }
}

/** Runs `fn` with the store open and always closes it. */
export async function withStore<T>(flags: StoreFlags, options: { readonly create: boolean }, fn: (opened: OpenedStore) => Promise<T>): Promise<T> {
  const opened = await openConfiguredStore(flags, options);
  try {
    return await fn(opened);
  } finally {
    await opened.store.close();
  }
}
