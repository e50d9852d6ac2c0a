// Closing the LMDB store under running scans: each scan is ended while the environment is still
// open, its reader gets a coded 503 error instead of a crash or a wait without end, and the store
// refuses later work with the same code.
import t from 'tap';
import { rowRenderSpec } from '../../lib/rows/row-format.js';
import { parseReadSpec } from '../../lib/model/read/read-request.js';
import type { LmdbStoreOptions } from '../../lib/store/lmdb/lmdb-store.js';
import type { ScanRequest } from '../../lib/store/store.js';
import { openSampleStore, sampleRows } from './lmdb-fixtures.js';

const ROWS = 3000;

const kinds: { name: string; options: Omit<LmdbStoreOptions, 'path'>; chunks: boolean }[] = [
  { name: 'a scan of row batches', options: { scanThreads: 0 }, chunks: false },
  { name: 'a scan of rendered chunks on this thread', options: { scanThreads: 0 }, chunks: true },
  { name: 'a scan of rendered chunks on the scan threads', options: { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } }, chunks: true },
];

for (const kind of kinds) {
  t.test(
    `regression: ${kind.name} still open when the store closes fails its reader with RG_ERR_STORE_UNAVAILABLE (was SIGSEGV in mdb_cursor_close)`,
    async (t) => {
      const { store, layout } = await openSampleStore(t, kind.options);
      await store.write('i', 'sample_table', sampleRows(layout, ROWS));
      const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, { versions: 'all' }) };
      const scan: AsyncIterator<unknown> = kind.chunks
        ? store.scanChunks('i', 'sample_table', request, rowRenderSpec(3))
        : store.scan('i', 'sample_table', request);
      t.equal((await scan.next()).done, false, 'the scan gave its first batch');
      t.equal(store.openScans, 1, 'and is open');
      await store.close();
      t.equal(store.openScans, 0, 'close() ended the scan');
      // Before the fix the next read (row batches) or return() touched the cursor of the closed
      // environment and the process died; the scan threads' reader waited for parts that never came.
      await t.rejects(
        scan.next(),
        { code: 'RG_ERR_STORE_UNAVAILABLE', message: /store was closed while this scan ran/ },
        'the next read fails with the coded error',
      );
      await t.rejects(scan.next(), { code: 'RG_ERR_STORE_UNAVAILABLE' }, 'and so does every later one');
      t.same(await scan.return!(), { done: true, value: undefined }, 'return() afterwards releases nothing twice');
    },
  );
}

t.test('a closed store refuses reads and writes of a table with RG_ERR_STORE_UNAVAILABLE, and closes twice without harm', async (t) => {
  const { store, layout } = await openSampleStore(t, { scanThreads: 0 });
  await store.write('i', 'sample_table', sampleRows(layout, 10));
  await store.close();
  const read = parseReadSpec(layout, {});
  t.throws(() => store.scan('i', 'sample_table', { limit: -1, read }), { code: 'RG_ERR_STORE_UNAVAILABLE', message: /store is closed/ });
  await t.rejects(store.write('i', 'sample_table', sampleRows(layout, 1)), { code: 'RG_ERR_STORE_UNAVAILABLE' });
  await t.resolves(store.close(), 'a second close() does nothing');
});
