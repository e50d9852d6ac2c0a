/**
 * GET rows with Accept: application/vnd.apache.parquet on the embedded store: a scan is a Parquet
 * file that hyparquet (the reader) reads back with the JSON scan's rows and values, column by
 * column and typed from the layout (string, long, int, double, float, boolean, bytes, a record as
 * a struct of its typed fields, a counter, a map family of longs; entity ids; nulls for absent cells); versions=2
 * gives lists of {timestamp, value}; limit keeps the scan's trailers; a point get is one file.
 * Scans are written by parquet-wasm from the scan threads' Arrow batches
 * (lib/rows/stages/parquet-arrow.ts): a client that leaves before the footer leaves no scan open.
 */
import t from 'tap';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import { join } from 'node:path';
import { ensureBuilt, tempDir } from '../cli/helpers.js';
import { getBytes, leaveAfterFirstBytes, raw, scansSettled, startGatewayOver } from './harness.js';
import { expectedValue, servedTypedTable as gateway, TYPED_LAYOUT, typedRows, typedStore, type Doc } from '../support/typed-table.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';

const ROWS = '/v1/instances/default/tables/typed/rows';
const PARQUET = { accept: 'application/vnd.apache.parquet' };
const N = 300;

t.before(ensureBuilt);

async function readParquet(body: Buffer): Promise<Record<string, unknown>[]> {
  const file = body.buffer.slice(body.byteOffset, body.byteOffset + body.length) as ArrayBuffer;
  return (await parquetReadObjects({ file, utf8: false })) as Record<string, unknown>[];
}

async function jsonScan(base: string, query: string): Promise<Doc[]> {
  return (await raw(base, 'GET', `${ROWS}?${query}`)).body
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l) => parseExactJson(l, 'row') as unknown as Doc);
}

t.test('a scan as Parquet reads back with the JSON scan values, typed from the layout', async (t) => {
  const base = await gateway(t, typedRows(N));
  const json = await jsonScan(base, 'limit=-1');
  const got = await getBytes(base, `${ROWS}?limit=-1`, PARQUET);
  t.equal(got.status, 200);
  t.equal(got.type, 'application/vnd.apache.parquet');
  t.equal(got.trailers['x-rowgate-rows'], String(N));
  t.equal(got.body.subarray(0, 4).toString('latin1'), 'PAR1', 'a Parquet file');
  const rows = await readParquet(got.body);
  t.equal(rows.length, json.length);
  t.equal(json.length, N);
  const layout = parseLayout(TYPED_LAYOUT);
  const columns = ['f:s', 'f:l', 'f:i', 'f:d', 'f:fl', 'f:b', 'f:by', 'f:rec', 'f:n', 'longs'];
  let compared = 0;
  json.forEach((doc, r) => {
    const row = rows[r]!;
    const key = Buffer.from(row['row_key'] as Uint8Array);
    if (!key.equals(encodeRowKey(layout.keyFormat, doc.entityId as never))) t.fail(`row ${r}: row_key differs`);
    if (row['name'] !== doc.entityId[0] || row['n'] !== BigInt(String(doc.entityId[1]))) t.fail(`row ${r}: entity id differs`);
    for (const c of columns) {
      const want = expectedValue(doc, c, 1);
      if (!t.same(row[c], want, `row ${r} column ${c}`, { diagnostic: false })) return;
      compared++;
    }
  });
  t.equal(compared, N * columns.length, 'every value of every row compared');
  // Absent cells are nulls (every fifth row has no f:s, every third no f:l): not just present values compared.
  t.ok(rows.some((r) => r['f:s'] === null) && rows.some((r) => r['f:l'] === null));
});

t.test('versions=2 gives lists of (timestamp, value) newest first, a map family a map of lists', async (t) => {
  const base = await gateway(t, typedRows(40));
  const json = await jsonScan(base, 'limit=-1&versions=2');
  const rows = await readParquet((await getBytes(base, `${ROWS}?limit=-1&versions=2`, PARQUET)).body);
  t.equal(rows.length, 40);
  let lists = 0;
  json.forEach((doc, r) => {
    for (const c of ['f:s', 'f:l', 'f:rec', 'longs']) {
      t.same(rows[r]![c], expectedValue(doc, c, 2), `row ${r} column ${c}`, { diagnostic: false });
      lists++;
    }
  });
  t.equal(lists, 160);
  t.ok(
    rows.some((r) => (r['f:s'] as unknown[]).length === 2),
    'some column holds two versions',
  );
});

t.test('limit keeps the trailers; a point get answers one Parquet file; the 406 names the media type', async (t) => {
  const base = await gateway(t, typedRows(30));
  const limited = await getBytes(base, `${ROWS}?limit=7`, PARQUET);
  t.equal(limited.trailers['x-rowgate-rows'], '7');
  t.ok(limited.trailers['x-rowgate-next-start'], 'the next page is named');
  t.equal((await readParquet(limited.body)).length, 7);
  const one = await getBytes(base, `${ROWS}?eid=${encodeURIComponent('["u3", 3]')}`, PARQUET);
  t.equal(one.status, 200);
  t.equal(one.type, 'application/vnd.apache.parquet');
  const [row] = await readParquet(one.body);
  t.equal(row?.['name'], 'u3');
  t.equal(row?.['n'], 3n);
  const meta = parquetMetadata(one.body.buffer.slice(one.body.byteOffset, one.body.byteOffset + one.body.length) as ArrayBuffer);
  t.equal(meta.row_groups[0]?.columns[0]?.meta_data?.codec, 'SNAPPY', 'snappy by default');
  const refused = await raw(base, 'GET', `${ROWS}?limit=1`, undefined, { accept: 'text/csv' });
  t.equal(refused.status, 406);
  t.match(refused.body, 'application/vnd.apache.parquet');
});

t.test('a client that goes away before the file ends: no scan left open or on the scan threads, the next scan is whole', async (t) => {
  const data = join(tempDir(t), 'data');
  await typedStore(data, typedRows(2000));
  const store = new LmdbStore({ path: data });
  const h = await startGatewayOver(store);
  t.teardown(async () => {
    await h.close();
    await store.close();
  });
  // Small parts, and parallel from the first byte, so 2,000 rows are many parts on the scan threads;
  // 2,000 rows are one row group: the client leaves after its bytes, before the footer.
  store.parallelScan.minBytes = 0;
  store.parallelScan.partBytes = 1024;
  const before = store.scanPool!.partsSubmitted;
  await leaveAfterFirstBytes(h.base, `${ROWS}?limit=-1`, PARQUET);
  t.ok(store.scanPool!.partsSubmitted > before, 'the scan ran on the scan threads');
  await scansSettled(store);
  t.equal(store.openScans, 0, 'the scan is closed');
  t.equal(store.scanPool!.busy, 0, 'no part left on the scan threads');
  const whole = await getBytes(h.base, `${ROWS}?limit=-1`, PARQUET);
  t.equal(whole.status, 200);
  t.equal((await readParquet(whole.body)).length, 2000, 'the next scan reads back whole');
});
