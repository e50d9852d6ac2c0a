/** Opens the store a configuration names. */
import type { StoreConfig } from '../config.js';
import { rgError } from '../errors.js';
import { LmdbStore } from './lmdb/lmdb-store.js';
import type { Store } from './store.js';

export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.kind) {
    case 'lmdb':
      return new LmdbStore({ path: config.path });
    case 'bigtable':
      throw rgError('RG_ERR_BAD_CONFIG', 'configuration store.kind: bigtable is not available in this build yet; use kind: lmdb');
  }
}
