import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { RowWrite } from '../../lib/model/types.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { RAW_LAYOUT, storeConformance } from './conformance.js';

const dirs: string[] = [];
t.teardown(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

storeConformance(t, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-lmdb-'));
  dirs.push(dir);
  return new LmdbStore({ path: dir });
});

t.test('regression: a data directory whose name has an extension (./rowgate.db) opens as a directory', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'rowgate-lmdb-')), 'rowgate.db');
  dirs.push(dir);
  const store = new LmdbStore({ path: dir });
  await store.createInstance('x');
  t.same(await store.listInstances(), ['x']);
  await store.close();
});

t.test('an abandoned scan releases its LMDB read transaction (the reader table, not only the store counter)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-lmdb-'));
  dirs.push(dir);
  const store = new LmdbStore({ path: dir });
  t.teardown(() => store.close());
  await store.createInstance('i');
  await store.createTable('i', parseLayout(RAW_LAYOUT));
  const rows: RowWrite[] = [];
  for (let i = 0; i < 3000; i++) {
    rows.push({
      rowKey: Buffer.from(`row${String(i).padStart(5, '0')}`),
      cells: [{ kind: 'value', family: 'info', qualifier: 'name', timestamp: 1, schemaId: 0, json: '"n"' }],
    });
  }
  await store.write('i', 'raw', rows);
  const env = (store as unknown as { env: RootDatabase }).env;
  // readerList(): one line per reader slot, `pid thread txnid`; txnid `-` is a slot holding no transaction.
  const readers = (): string => env.readerList().trim();
  const openTransactions = (): number =>
    readers()
      .split('\n')
      .filter((line) => /\s\d+\s*$/.test(line)).length;
  t.equal(openTransactions(), 0, `no read transaction before the scan: ${readers()}`);
  const scan = store.scan('i', 'raw', { limit: -1, read: { maxVersions: 1, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER } });
  const first = await scan.next();
  t.notOk(first.done, 'the scan returned a first batch and has more to read');
  t.equal(openTransactions(), 1, `an open scan holds a read transaction: ${readers()}`);
  await scan.return(undefined);
  // lmdb-js resets its shared read transaction for sync reads after the current turn of the event loop.
  await new Promise((r) => setTimeout(r, 20));
  t.equal(openTransactions(), 0, `after return() no read transaction is held: ${readers()}`);
  t.equal(store.openScans, 0);
});
