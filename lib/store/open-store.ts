/** Opens the store a configuration names. */
import type { StoreConfig } from '../config/config.js';
import { LmdbStore } from './lmdb/lmdb-store.js';
import type { Store } from './store.js';

export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.kind) {
    case 'lmdb':
      return new LmdbStore({ path: config.path, scanThreads: config.scanThreads });
    case 'bigtable': {
      // Loaded only when configured: the Bigtable client's module graph (gRPC, protobufs, auth)
      // took ~10% of a short gateway run's CPU profile at start-up, paid by every LMDB user.
      const { BigtableStore } = await import('./bigtable/bigtable-store.js');
      return BigtableStore.open({ projectId: config.projectId, instanceId: config.instanceId, tablePrefix: config.tablePrefix, metrics: config.metrics });
    }
  }
}
