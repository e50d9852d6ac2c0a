/**
 * lib/deps/arrow.ts, the one door to apache-arrow's runtime (its bundled build): what rowgate runs
 * of it is there, it is not the module entry's copy, and an IPC stream rowgate writes with it is
 * the stream the module entry writes for the same table, byte for byte. The stream is the stage's
 * (ArrowEncodeStage: ArrowStreamParts' schema, batch messages and end marker, joined), so this
 * also checks the joined pieces against one writer of the whole stream. An upgrade of
 * apache-arrow that drops the bundle or makes it write other bytes fails here.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import * as moduleEntry from 'apache-arrow';
import { arrow } from '../../lib/deps/arrow.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { RowOut } from '../../lib/model/types.js';
import { ArrowColumns } from '../../lib/rows/formats/arrow-columns.js';
import { ArrowEncodeStage } from '../../lib/rows/stages/arrow.js';
import { TYPED_LAYOUT, typedRows } from '../support/typed-table.js';

const LAYOUT = parseLayout(TYPED_LAYOUT);
const ROWS: RowOut[] = typedRows(300).map((r) => ({
  rowKey: r.rowKey,
  cells: r.cells.map((c) => {
    if (c.kind !== 'value') throw new Error('typedRows writes values only');
    return { family: c.family, qualifier: c.qualifier, timestamp: c.timestamp!, schemaId: 1, json: c.json };
  }),
}));

/** The stage's stream, the rows given one at a time (so its batches hold exactly `batchRows`). */
async function stageStream(rows: RowOut[], versions: number, batchRows: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(
    Readable.from(
      rows.map((row) => [row]),
      { objectMode: true },
    ),
    new ArrowEncodeStage(LAYOUT, versions, batchRows),
    async (src: AsyncIterable<Buffer>) => {
      for await (const c of src) chunks.push(c);
    },
  );
  return Buffer.concat(chunks);
}

t.test('the door gives the bundled build, with every name rowgate runs, not the module entry', async (t) => {
  const used = ['Binary', 'Bool', 'DataType', 'Field', 'FixedSizeBinary', 'Float32', 'Float64', 'Int32', 'Int64', 'List', 'makeBuilder', 'Map_'] as const;
  const more = ['SparseUnion', 'SparseUnionBuilder', 'Struct', 'Table', 'Utf8', 'makeData', 'RecordBatch', 'RecordBatchStreamWriter'] as const;
  for (const name of [...used, ...more]) t.type(arrow[name], 'function', name);
  t.equal(typeof arrow.Type.Int, 'number');
  t.equal(arrow.Precision.DOUBLE, moduleEntry.Precision.DOUBLE);
  t.not(arrow.RecordBatch, moduleEntry.RecordBatch, 'a copy of its own: batches are handed to its functions only');
});

for (const versions of [1, 3])
  t.test(`the stage's stream (versions ${versions}, three batches) is the module entry's stream of the same table`, async (t) => {
    const bytes = await stageStream(ROWS, versions, 128);
    const read = moduleEntry.tableFromIPC(bytes);
    t.equal(read.numRows, ROWS.length);
    t.equal(read.batches.length, 3, '128 + 128 + 44 rows');
    const rewritten = Buffer.from(moduleEntry.tableToIPC(read, 'stream'));
    t.ok(rewritten.equals(bytes), 'the module entry writes the same bytes');
    const batches = [ROWS.slice(0, 128), ROWS.slice(128, 256), ROWS.slice(256)].map((rows) => new ArrowColumns(LAYOUT, versions).batchOf(rows));
    const oneWriter = Buffer.from(arrow.tableToIPC(new arrow.Table(batches), 'stream'));
    t.ok(oneWriter.equals(bytes), "one writer of the whole stream writes the joined pieces' bytes");
  });

t.test('no rows: the schema, a batch of no rows and the end marker, as the module entry writes them', async (t) => {
  const bytes = await stageStream([], 1, 128);
  const read = moduleEntry.tableFromIPC(bytes);
  t.equal(read.numRows, 0);
  t.same(
    read.schema.fields.map((f) => f.name),
    ['row_key', 'name', 'n', 'f:s', 'f:l', 'f:i', 'f:d', 'f:fl', 'f:b', 'f:by', 'f:rec', 'f:n', 'longs'],
  );
  t.ok(Buffer.from(moduleEntry.tableToIPC(read, 'stream')).equals(bytes));
});
