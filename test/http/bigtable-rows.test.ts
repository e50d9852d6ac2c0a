/**
 * The HTTP row suite (./suites/rows-suite.ts: reads, scans, POST, bulk get, delete, counters), the
 * same one rows.test.ts runs on LMDB, against a gateway on the Bigtable store, over a cbtemulator
 * this file starts; skipped, saying what is missing, without it. Then what only Bigtable has.
 *
 * Revision 3 only: the revisions differ in the gateway's dialect and row rendering, which the
 * Bigtable store does not take part in (it has no scanChunks fast path that renders rows itself);
 * rows-revisions-1-2.test.ts runs the suite under revisions 1 and 2.
 */
import t from 'tap';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import { EMULATOR_MISSING, startEmulator } from '../store/bigtable-emulator.js';
import { raw, startGateway } from './harness.js';
import { rowsSuite } from './suites/rows-suite.js';

const emulator = await startEmulator();
if (!emulator) {
  t.test('HTTP rows on Bigtable', { skip: EMULATOR_MISSING }, async () => undefined);
} else {
  t.teardown(() => emulator.stop());

  rowsSuite(t, { revision: 3, store: 'bigtable', open: () => BigtableStore.open({ projectId: 'test', instanceId: 'http', tablePrefix: 'rows' }) });

  t.test('instances and tables are listed from Bigtable; an unknown table is a 404', async (t) => {
    const h = await startGateway({}, { store: await BigtableStore.open({ projectId: 'test', instanceId: 'http', tablePrefix: 'meta' }) });
    t.teardown(() => h.close());
    const instances = await raw(h.base, 'GET', '/v1/instances');
    t.equal(instances.status, 200, instances.body);
    t.same(JSON.parse(instances.body), [
      { name: 'default', uri: '/v1/instances/default' },
      { name: 'hidden', uri: '/v1/instances/hidden' },
    ]);
    const tables = await raw(h.base, 'GET', '/v1/instances/default/tables');
    t.equal(tables.status, 200, tables.body);
    t.same(JSON.parse(tables.body), [
      { name: 'players', uri: '/v1/instances/default/tables/players' },
      { name: 'sample_table', uri: '/v1/instances/default/tables/sample_table' },
    ]);
    const layout = await raw(h.base, 'GET', '/v1/instances/default/tables/sample_table');
    t.equal(layout.status, 200);
    t.equal(JSON.parse(layout.body).name, 'sample_table');
    const missing = await raw(h.base, 'GET', '/v1/instances/default/tables/nosuch/rows');
    t.equal(missing.status, 404);
    t.equal((JSON.parse(missing.body) as { code: string }).code, 'RG_ERR_TABLE_NOT_FOUND');
  });
}
