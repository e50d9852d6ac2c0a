// The LMDB store's Arrow record batches (Store.scanChunks with an ArrowBatchSpec, joined into a
// stream by arrowChunkSource) against the reference stages (Store.scan()'s rows through
// ArrowEncodeStage): on the calling thread (a limit, a row filter) the same stream byte for byte,
// batch boundaries included; on the scan threads (batches end with each part) a stream apache-arrow
// reads back as the same table. Over tables of all four row key formats, typed columns, map
// families, spilled rows, and reads of cols, versions, timerange, limit and none. The flat table's
// batches are filled in typed arrays (arrow-fill.ts), the others' made by ArrowColumns.
import t from 'tap';
import { tableFromIPC, type Table } from 'apache-arrow';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { parseReadSpec } from '../../lib/model/read/read-request.js';
import type { RowOut, RowWrite, TableLayout } from '../../lib/model/types.js';
import { arrowChunkSource, arrowStreamParts, ArrowEncodeStage } from '../../lib/rows/stages/arrow.js';
import { LimitStage } from '../../lib/rows/stages/avro.js';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { ScanRequest } from '../../lib/store/store.js';
import { SAMPLE_LAYOUT } from '../support/fixture-tables.js';
import { inProcessGateway } from '../support/in-process.js';
import { flatLayout, flatRows, valueCell } from '../support/flat-table.js';
import { TYPED_LAYOUT, typedRows } from '../support/typed-table.js';
import { RAW_LAYOUT } from './conformance.js';
import { HASH_LAYOUT, HASH_PREFIX_LAYOUT, openStoreWithTable, sampleRows } from './lmdb-fixtures.js';

const ROWS = 600;
const ARROW = { accept: 'application/vnd.apache.arrow.stream' };

/** Rows of each layout; the first of each table also past the compact limit (16 KiB), stored spilled. */
const TABLES: { layout: TableLayout; rows: RowWrite[]; reads: Record<string, string>[] }[] = [
  {
    layout: flatLayout(),
    // Row 11's key is one its format cannot decode (its STRING component is the invalid UTF-8
    // C3 28): its entity id columns are null, as the reference stages make them.
    rows: flatRows(ROWS).map((r, i) => (i === 11 ? { ...r, rowKey: Buffer.from([0x42, 0xc3, 0x28, 0, 0x80, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 2]) } : r)),
    reads: [{}, { versions: '2' }, { timerange: '2..8' }, { cols: 'f:s,f:b' }, { cols: 'f:nl' }],
  },
  {
    layout: parseLayout(TYPED_LAYOUT),
    rows: typedRows(ROWS),
    reads: [{}, { versions: '2' }, { versions: 'all', timerange: '2..8' }, { cols: 'f:s,longs' }, { cols: 'f:rec,f:n', versions: '3' }],
  },
  {
    layout: parseLayout(SAMPLE_LAYOUT),
    rows: sampleRows(parseLayout(SAMPLE_LAYOUT), ROWS),
    reads: [{}, { versions: '2' }, { versions: 'all', timerange: '105..125' }, { cols: 'strings,group_family:counter' }, { cols: 'longs' }],
  },
  {
    layout: parseLayout(RAW_LAYOUT),
    rows: Array.from({ length: ROWS }, (_, i) => ({
      rowKey: Buffer.from(`raw\u0000${i}`),
      cells: [
        valueCell('info', 'name', 5 + (i % 3), JSON.stringify(`n${i}`)),
        valueCell('info', 'name', 1, '"old"'),
        ...(i % 4 === 0 ? [] : [valueCell('info', 'age', 2, String(i % 90))]),
        { kind: 'counter-set' as const, family: 'info', qualifier: 'visits', timestamp: 3, value: BigInt(i) },
        valueCell('tags', `t${i % 7}`, 4, '"x"'),
      ],
    })),
    reads: [{}, { versions: 'all' }, { cols: 'tags' }, { timerange: '4..6' }],
  },
  {
    layout: parseLayout(HASH_LAYOUT),
    rows: Array.from({ length: ROWS }, (_, i) => ({
      rowKey: encodeRowKey(parseLayout(HASH_LAYOUT).keyFormat, [`key ${i}`]),
      cells: [valueCell('m', `q${i % 5}`, 10 + i, JSON.stringify(`v${i}`)), valueCell('m', 'b', 1, '"b"')],
    })),
    reads: [{}, { versions: '2' }],
  },
  {
    layout: parseLayout(HASH_PREFIX_LAYOUT),
    rows: Array.from({ length: ROWS }, (_, i) => ({
      rowKey: encodeRowKey(parseLayout(HASH_PREFIX_LAYOUT).keyFormat, [`key ${i}`]),
      cells: [valueCell('f', 'a', 9, JSON.stringify(`a${i}`)), { kind: 'counter-set' as const, family: 'f', qualifier: 'n', timestamp: 2, value: BigInt(i) }],
    })),
    reads: [{}, { cols: 'f:n' }],
  },
];
// One spilled row a table (a map family's many qualifiers, or a long string).
for (const table of TABLES) {
  const family = [...table.layout.families.values()].find((f) => f.mapSchema !== undefined && f.mapSchema.type !== 'COUNTER');
  const first = table.rows[0]!;
  const wide = family
    ? Array.from({ length: 1000 }, (_, q) =>
        valueCell(family.name, `wide-${q}-${'w'.repeat(20)}`, 300 + q, family.mapSchema!.value === '"long"' ? String(q) : JSON.stringify(`w${q}`)),
      )
    : [valueCell('f', table.layout.name === 'flat' ? 's' : 'a', 300, JSON.stringify('w'.repeat(20_000)))];
  table.rows[0] = { rowKey: first.rowKey, cells: [...first.cells, ...wide] };
}

const layouts = TABLES.map((x) => x.layout);
t.ok(arrowStreamParts(layouts[0]!, 1).columns.flat, 'the flat table’s batches are filled in typed arrays');
t.notOk(arrowStreamParts(layouts[0]!, 2).columns.flat, 'with versions 2 its columns are lists: ArrowColumns makes them');
t.notOk(arrowStreamParts(layouts[1]!, 1).columns.flat, 'the typed table (a record, a map family): ArrowColumns makes them');
const { store } = await openStoreWithTable(t, layouts[0]!, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } });
for (const layout of layouts.slice(1)) await store.createTable('i', layout);
for (const { layout, rows } of TABLES) await store.write('i', layout.name, rows);

/** The reference stages' stream: Store.scan()'s rows (asked one past the limit) through LimitStage, then ArrowEncodeStage one row at a time (batches of exactly `batchRows`). */
async function referenceStream(
  layout: TableLayout,
  request: ScanRequest,
  batchRows: number,
): Promise<{ bytes: Buffer; rows: number; next: Buffer | undefined }> {
  const asked = request.limit < 0 ? request : { ...request, limit: request.limit + 1 };
  const rows: RowOut[] = [];
  let sent = 0;
  let next: Buffer | undefined;
  const limit = new LimitStage(request.limit, (n, key) => {
    sent = n;
    next = key;
  });
  limit.on('data', (batch: RowOut[]) => rows.push(...batch));
  for await (const batch of store.scan('i', layout.name, asked)) if (!limit.write(batch)) await new Promise((r) => limit.once('drain', r));
  await new Promise<void>((resolve) => limit.end(resolve));
  const stage = new ArrowEncodeStage(layout, request.read.maxVersions, batchRows);
  const chunks: Buffer[] = [];
  stage.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    stage.on('end', resolve);
    stage.on('error', reject);
  });
  for (const row of rows) stage.write([row]);
  stage.end();
  await done;
  return { bytes: Buffer.concat(chunks), rows: sent, next };
}

/** The store's batches joined as GET rows joins them (arrowChunkSource): its bytes, rows and the next page's key. */
async function fusedStream(store: LmdbStore, layout: TableLayout, request: ScanRequest, batchRows: number) {
  const asked = request.limit < 0 ? request : { ...request, limit: request.limit + 1 };
  const scan = store.scanChunks('i', layout.name, asked, { arrow: { batchRows, rows: request.limit } });
  const source = arrowChunkSource(scan, arrowStreamParts(layout, request.read.maxVersions));
  const chunks: Buffer[] = [];
  let rows = 0;
  try {
    for (let c = await source.next(); c !== undefined; c = await source.next()) {
      chunks.push(Buffer.from(c.bytes));
      rows += c.rows;
      c.release?.();
    }
  } finally {
    await source.close();
  }
  return { bytes: Buffer.concat(chunks), rows, next: source.nextRowKey };
}

/** A table's rows as comparable text: bigints, bytes, lists, maps and structs spelled out. */
function rowsText(table: Table): string {
  const plain = (v: unknown): unknown => {
    if (typeof v === 'bigint') return `${v}n`;
    if (v instanceof Uint8Array) return `0x${Buffer.from(v).toString('hex')}`;
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map(plain);
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function' && !(Symbol.iterator in v)) return plain((v as { toJSON(): unknown }).toJSON());
    if (Symbol.iterator in v) return [...(v as Iterable<unknown>)].map(plain);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  };
  return JSON.stringify(table.toArray().map((r) => plain((r as { toJSON(): unknown }).toJSON())));
}

t.test('on the calling thread: the reference stream byte for byte, batch boundaries and next page included', async (t) => {
  let compared = 0;
  for (const { layout, reads, rows } of TABLES) {
    const filter = { matches: (k: Buffer) => k[k.length - 1]! % 3 === 0 };
    for (const q of reads) {
      for (const [limit, rowFilter] of [
        [0, false],
        [1, false],
        [97, false],
        [ROWS - 1, false],
        [ROWS + 5, false],
        [-1, true],
        [50, true],
      ] as const) {
        // Batch boundaries do not depend on the read: small batches with each table's first read
        // and every limit, the others at the default size (630 streams took 8 s, now 245).
        for (const batchRows of q === reads[0] ? [7, 64, 8192] : [8192]) {
          const request: ScanRequest = { limit, read: parseReadSpec(layout, q), ...(rowFilter ? { filter } : {}) };
          const what = `${layout.name} ${JSON.stringify(q)} limit ${limit}${rowFilter ? ' filtered' : ''} batches of ${batchRows}`;
          const want = await referenceStream(layout, request, batchRows);
          const got = await fusedStream(store, layout, request, batchRows);
          t.equal(got.rows, want.rows, `${what}: rows`);
          t.same(got.next?.toString('hex'), want.next?.toString('hex'), `${what}: the next page's row`);
          if (!got.bytes.equals(want.bytes)) t.fail(`${what}: bytes differ (${got.bytes.length} against ${want.bytes.length})`);
          compared++;
        }
      }
    }
    t.ok(rows.length === ROWS, `${layout.name}: ${rows.length} rows written`);
  }
  t.ok(compared > 200, `${compared} streams compared`);
  t.equal(store.openScans, 0, 'every scan closed');
});

t.test('on the scan threads: the reference table, every part its own batches', async (t) => {
  const before = store.scanPool!.partsSubmitted;
  for (const { layout, reads } of TABLES) {
    for (const q of reads) {
      const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, q) };
      const what = `${layout.name} ${JSON.stringify(q)}`;
      const want = await referenceStream(layout, request, 8192);
      const got = await fusedStream(store, layout, request, 8192);
      t.equal(got.rows, want.rows, `${what}: rows`);
      const [a, b] = [tableFromIPC(got.bytes), tableFromIPC(want.bytes)];
      t.equal(a.numRows, want.rows, `${what}: rows read back`);
      t.ok(a.schema.fields.length > 0 && a.schema.fields.every((f, i) => f.toString() === b.schema.fields[i]!.toString()), `${what}: the same schema`);
      t.equal(rowsText(a), rowsText(b), `${what}: the same values`);
      t.ok(a.batches.length > 1, `${what}: several batches (${a.batches.length})`);
    }
  }
  t.ok(store.scanPool!.partsSubmitted - before > 10, 'the unbounded scans ran on the scan threads');
  t.equal(store.openScans, 0, 'every scan closed');
});

t.test('a scan with no rows: the schema, a batch of none and the end, as the stage writes', async (t) => {
  const keys = [encodeRowKey(layouts[0]!.keyFormat, ['nobody', 1, 1n]), encodeRowKey(layouts[1]!.keyFormat, ['nobody', 1n])];
  for (const [i, key] of keys.entries()) {
    const layout = layouts[i]!;
    for (const limit of [-1, 0, 10]) {
      const request: ScanRequest = { start: key, end: key, limit, read: parseReadSpec(layout, {}) };
      const got = await fusedStream(store, layout, request, 8192);
      const want = await referenceStream(layout, request, 8192);
      t.equal(got.rows, 0);
      t.ok(got.bytes.equals(want.bytes), `${layout.name}, limit ${limit}: the reference bytes`);
      t.equal(tableFromIPC(got.bytes).numRows, 0);
    }
  }
});

t.test('a GET on the scan threads (checked in process): the whole table, a limit’s trailers as the JSON scan’s', async (t) => {
  const h = inProcessGateway(store);
  t.teardown(() => h.close());
  const layout = layouts[0]!;
  const path = `/v1/instances/i/tables/${layout.name}/rows`;
  const before = store.scanPool!.partsSubmitted;
  const whole = await h.raw('GET', `${path}?limit=-1`, undefined, ARROW);
  t.equal(whole.status, 200);
  t.equal(whole.trailers['x-rowgate-rows'], String(ROWS), 'every row counted in the trailer');
  const want = await referenceStream(layout, { limit: -1, read: parseReadSpec(layout, {}) }, 8192);
  t.equal(rowsText(tableFromIPC(whole.bytes)), rowsText(tableFromIPC(want.bytes)), 'the reference table');
  t.ok(store.scanPool!.partsSubmitted - before > 4, 'scanned on the scan threads');

  // A limit: the calling thread; the same trailers as the JSON scan (rows sent, the next page).
  const limited = await h.raw('GET', `${path}?limit=97`, undefined, ARROW);
  const json = await h.raw('GET', `${path}?limit=97`);
  t.equal(tableFromIPC(limited.bytes).numRows, 97);
  t.equal(limited.trailers['x-rowgate-rows'], '97');
  t.ok(json.trailers['x-rowgate-next-start'] !== undefined, 'the JSON scan names a next page');
  t.equal(limited.trailers['x-rowgate-next-start'], json.trailers['x-rowgate-next-start'], 'the same next page as the JSON scan');
  // A client that goes away mid-stream needs a socket: test/http/rows-arrow.test.ts.
});
