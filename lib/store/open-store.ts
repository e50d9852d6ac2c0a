/** Opens the store a configuration names. */
import type { StoreConfig } from '../config.js';
import { BigtableStore } from './bigtable/bigtable-store.js';
import { LmdbStore } from './lmdb/lmdb-store.js';
import type { Store } from './store.js';

export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.kind) {
    case 'lmdb':
      return new LmdbStore({ path: config.path, scanThreads: config.scanThreads });
    case 'bigtable':
      return BigtableStore.open({ projectId: config.projectId, instanceId: config.instanceId, tablePrefix: config.tablePrefix, metrics: config.metrics });
  }
}
