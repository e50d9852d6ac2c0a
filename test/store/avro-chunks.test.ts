// The LMDB store's Avro blocks (Store.scanChunks with an AvroBlockSpec, encoded on the scan
// threads or, for bounded scans, on the calling thread) hold exactly the datums the reference
// Avro stage (lib/rows/stages/avro.ts over Store.scan()'s rows) writes, row for row and byte for
// byte, for every selection, bound, codec and writer-schema choice; compact and spilled rows alike.
import t from 'tap';
import { Readable } from 'node:stream';
import avro from 'avsc';
import type { AvroCodec } from '../../lib/model/avro/avro-codecs.js';
import { avroHeader, newSyncMarker } from '../../lib/model/avro/avro-container.js';
import { avroExportOf } from '../../lib/model/avro/avro-export.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { parseReadSpec } from '../../lib/model/read/read-request.js';
import type { RowOut, RowWrite } from '../../lib/model/types.js';
import { AvroEncodeStage } from '../../lib/rows/stages/avro.js';
import { wholeBody } from '../../lib/rows/stages/whole-body.js';
import type { ScanRequest } from '../../lib/store/store.js';
import { flatLayout, flatRows, valueCell } from '../support/flat-table.js';
import { openSampleStore, sampleRows } from './lmdb-fixtures.js';

const ROWS = 2000;
const { store, layout } = await openSampleStore(t, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 8 * 1024 } });
const wide: RowWrite[] = [5, 977, 1500].map((id) => ({
  // Rows past the compact limit (16 KiB): stored as cell entries.
  rowKey: encodeRowKey(layout.keyFormat, [id]),
  cells: Array.from({ length: 60 }, (_, q) => ({
    kind: 'value' as const,
    family: 'strings',
    qualifier: `wide${q}`,
    timestamp: 200 + q,
    schemaId: 0,
    json: JSON.stringify(`${'x'.repeat(500)}${q}`),
  })),
}));
// Keys without a 00 byte (most LONG ids hold some): in a scan thread such a key is a view of
// lmdb-js's key buffer, where a key with 00s is unescaped into a new Buffer.
const zeroless = Array.from({ length: 40 }, (_, k) => encodeRowKey(layout.keyFormat, [0x0101_0101_0101_0101n + BigInt(k) * 0x0102_0304n]))
  .filter((key) => !key.includes(0))
  .map((rowKey) => ({ rowKey, cells: [{ kind: 'value' as const, family: 'strings', qualifier: 'z', timestamp: 9, schemaId: 0, json: '"no zero"' }] }));
await store.write('i', 'sample_table', sampleRows(layout, ROWS));
await store.write('i', 'sample_table', wide);
await store.write('i', 'sample_table', zeroless);
// A table of flat columns, whose compact rows' values are read from their stored bytes
// (NewestCells, AvroExport.storedRowValue), the first row spilled.
const flat = flatLayout();
await store.createTable('i', flat);
const flatTable = flatRows(ROWS);
flatTable[0] = { ...flatTable[0]!, cells: [...flatTable[0]!.cells, valueCell('f', 's', 300, JSON.stringify('w'.repeat(20_000)))] };
// Row 11's key is one its format cannot decode (its STRING component is the invalid UTF-8 C3 28):
// its entity_id is null (it failed the export: `invalid "string": null`).
flatTable[11] = { ...flatTable[11]!, rowKey: Buffer.from([0x42, 0xc3, 0x28, 0, 0x80, 0, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 2]) };
await store.write('i', 'flat', flatTable);

/** The datums of an Avro file, each as its bytes (avsc's decoder, not decoding the values). */
async function datums(file: Buffer): Promise<Buffer[]> {
  const out: Buffer[] = [];
  const decoder = new avro.streams.BlockDecoder({ noDecode: true });
  decoder.on('data', (d: Buffer) => out.push(Buffer.from(d)));
  await new Promise<void>((resolve, reject) => {
    decoder.on('end', resolve);
    decoder.on('error', reject);
    Readable.from([file]).pipe(decoder);
  });
  return out;
}

/** The file of the reference stages: Store.scan()'s rows through the Avro stage. */
async function referenceFile(request: ScanRequest, withSchema: boolean, codec: AvroCodec, table = layout): Promise<Buffer> {
  const rows: RowOut[] = [];
  for await (const batch of store.scan('i', table.name, request)) rows.push(...batch);
  return wholeBody(new AvroEncodeStage(table, withSchema, codec), rows);
}

/** The file of the store's blocks: the header, then every chunk as it came. */
async function blocksFile(request: ScanRequest, withSchema: boolean, codec: AvroCodec, table = layout): Promise<{ file: Buffer; rows: number; cells: number }> {
  const sync = newSyncMarker();
  const parts = [await avroHeader(avroExportOf(table).type, codec, sync)];
  let rows = 0;
  let cells = 0;
  for await (const chunk of store.scanChunks('i', table.name, request, { avro: { withSchema, codec, sync } })) {
    parts.push(chunk.bytes);
    rows += chunk.rows;
    cells += chunk.cells;
  }
  return { file: Buffer.concat(parts), rows, cells };
}

t.test('the blocks hold the reference datums for every read, bound and path', async (t) => {
  t.ok(zeroless.length > 10, `rows whose keys hold no 00 byte (${zeroless.length})`);
  const before = store.scanPool!.partsSubmitted;
  const reads = [{}, { versions: '2' }, { versions: 'all', timerange: '105..125' }, { cols: 'strings,group_family:counter' }, { cols: 'longs' }];
  const bounds = [{}, { start: encodeRowKey(layout.keyFormat, [17]), end: encodeRowKey(layout.keyFormat, [1900]) }];
  // limit -1: the scan threads; a limit: the calling thread (ScanCursor).
  for (const limit of [-1, 1500]) {
    for (const q of reads) {
      for (const b of bounds) {
        const request: ScanRequest = { ...b, limit, read: parseReadSpec(layout, q) };
        const what = `limit ${limit} ${JSON.stringify(q)} ${Object.keys(b).join(',') || 'whole table'}`;
        const expected = await datums(await referenceFile(request, true, 'null'));
        const got = await blocksFile(request, true, 'null');
        t.equal(got.rows, expected.length, `${what}: rows counted`);
        const mismatch = (await datums(got.file)).findIndex((d, i) => !d.equals(expected[i]!));
        t.equal(mismatch, -1, `${what}: every datum the same bytes`);
      }
    }
  }
  // A row filter (wildcard entity ids): the calling thread, keys given unescaped.
  const filtered: ScanRequest = { limit: -1, read: parseReadSpec(layout, {}), filter: { matches: (k) => k[k.length - 1]! % 3 === 0 } };
  const expected = await datums(await referenceFile(filtered, true, 'null'));
  t.ok(expected.length > 100 && expected.length < ROWS / 2, `the filter keeps some rows (${expected.length})`);
  t.same(await datums((await blocksFile(filtered, true, 'null')).file), expected, 'a filtered scan: the reference datums');
  t.ok(store.scanPool!.partsSubmitted - before > 10, 'the unbounded scans ran on the scan threads');
  t.equal(store.openScans, 0, 'every scan closed');
});

t.test('a table of flat columns, its values read from the stored bytes: the reference datums and cell counts', async (t) => {
  const reads = [{}, { versions: '2' }, { timerange: '2..8' }, { cols: 'f:s,f:b' }, { cols: 'f:nl' }, { versions: 'all', timerange: '0..15' }];
  // A row filter (wildcard entity ids) runs on the calling thread, its keys given unescaped.
  const filter = { matches: (k: Buffer) => k[k.length - 1]! % 3 === 0 };
  for (const [limit, filtered] of [
    [-1, false],
    [777, false],
    [-1, true],
  ] as const) {
    for (const q of reads) {
      for (const withSchema of [true, false]) {
        const request: ScanRequest = { limit, read: parseReadSpec(flat, q), ...(filtered && { filter }) };
        const what = `limit ${limit}${filtered ? ' filtered' : ''} ${JSON.stringify(q)} withSchema ${withSchema}`;
        const expected = await datums(await referenceFile(request, withSchema, 'null', flat));
        const got = await blocksFile(request, withSchema, 'null', flat);
        t.equal(got.rows, expected.length, `${what}: rows counted`);
        let cells = 0;
        for await (const batch of store.scan('i', 'flat', request)) for (const row of batch) cells += row.cells.length;
        t.equal(got.cells, cells, `${what}: cells counted`);
        const mismatch = (await datums(got.file)).findIndex((d, i) => !d.equals(expected[i]!));
        t.equal(mismatch, -1, `${what}: every datum the same bytes`);
      }
    }
  }
});

t.test('deflate blocks and revision 1 datums (writer_schema -1) decode to the reference datums', async (t) => {
  for (const withSchema of [true, false]) {
    for (const codec of ['null', 'deflate'] as const) {
      const request: ScanRequest = { limit: -1, read: parseReadSpec(layout, { versions: 'all' }) };
      const expected = await datums(await referenceFile(request, withSchema, codec));
      const got = await blocksFile(request, withSchema, codec);
      t.same(await datums(got.file), expected, `withSchema ${withSchema}, codec ${codec}`);
      const cells = expected.length > 0 ? got.cells : 0;
      t.ok(cells > got.rows, 'cells counted (several a row)');
    }
  }
  const plain = await blocksFile({ limit: -1, read: parseReadSpec(layout, {}) }, true, 'null');
  const packed = await blocksFile({ limit: -1, read: parseReadSpec(layout, {}) }, true, 'deflate');
  t.ok(packed.file.length < plain.file.length / 2, `deflate compresses (${packed.file.length} of ${plain.file.length} bytes)`);
});

t.test('a scan with no rows is a file of its header alone', async (t) => {
  const request: ScanRequest = {
    start: encodeRowKey(layout.keyFormat, [1]),
    end: encodeRowKey(layout.keyFormat, [1]),
    limit: -1,
    read: parseReadSpec(layout, {}),
  };
  const got = await blocksFile(request, true, 'null');
  t.equal(got.rows, 0);
  t.same(await datums(got.file), []);
});
