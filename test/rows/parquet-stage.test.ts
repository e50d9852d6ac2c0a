/**
 * ParquetEncodeStage (lib/rows/stages/parquet.ts): rows in, parquet-wasm's file out. Every row
 * comes back in order whatever the batch and row group sizes, no rows still gives the columns,
 * back-pressure holds both ways (a reader that stops reading stops the rows taken), and a stage
 * destroyed midway ends without hanging.
 */
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { RowOut } from '../../lib/model/types.js';
import { ParquetEncodeStage } from '../../lib/rows/stages/parquet.js';
import { PARQUET_UNIONS } from '../../lib/rows/stages/parquet-spec.js';
import { parquetFromArrowChunks } from '../../lib/rows/stages/parquet-arrow.js';
import { arrowStreamParts } from '../../lib/rows/stages/arrow.js';
import type { RenderedChunk } from '../../lib/store/store.js';
import { TYPED_LAYOUT, typedRows } from '../support/typed-table.js';

const LAYOUT = parseLayout(TYPED_LAYOUT);

function rowsOut(n: number): RowOut[] {
  return typedRows(n).map((r) => ({
    rowKey: r.rowKey,
    cells: r.cells.map((c) => {
      if (c.kind !== 'value') throw new Error('typedRows writes values only');
      return { family: c.family, qualifier: c.qualifier, timestamp: c.timestamp!, schemaId: 1, json: c.json };
    }),
  }));
}

/** `rows` cut into chunks of `cut` rows (one row a chunk by default). */
function chunksOf(rows: RowOut[], cut = 1): RowOut[][] {
  const out: RowOut[][] = [];
  for (let i = 0; i < rows.length; i += cut) out.push(rows.slice(i, i + cut));
  return out;
}

async function fileOf(rows: RowOut[], stage: ParquetEncodeStage, cut = 1): Promise<ArrayBuffer> {
  const chunks: Buffer[] = [];
  await pipeline(Readable.from(chunksOf(rows, cut), { objectMode: true }), stage, async (src: AsyncIterable<Buffer>) => {
    for await (const c of src) chunks.push(c);
  });
  const file = Buffer.concat(chunks);
  return file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer;
}

for (const [batchRows, groupRows] of [
  [7, 50],
  [32, 64],
  [1000, 100],
] as const)
  t.test(`batches of ${batchRows} rows, row groups of ${groupRows}: every row back in order`, async (t) => {
    const rows = rowsOut(300);
    const file = await fileOf(rows, new ParquetEncodeStage(LAYOUT, 1, 'snappy', groupRows, batchRows));
    t.equal(parquetMetadata(file).row_groups.length, Math.ceil(300 / groupRows));
    const read = await parquetReadObjects({ file, columns: ['row_key', 'f:i'] });
    t.equal(read.length, 300);
    t.same(
      read.map((r) => r['f:i']),
      rows.map((_, i) => i - 150),
    );
  });

t.test('the same rows cut into chunks differently make the same file, byte for byte', async (t) => {
  // Where parquet-wasm ends a page or gives up a dictionary follows its input batches: with
  // batches as the rows arrive (1,300 a chunk here) instead of exactly batchRows, 20,000 rows
  // made another file.
  const rows = rowsOut(20_000);
  const [one, cut] = await Promise.all([1, 1300].map((n) => fileOf(rows, new ParquetEncodeStage(LAYOUT, 1, 'snappy', undefined, 1000), n)));
  t.ok(Buffer.from(cut!).equals(Buffer.from(one!)), 'chunks of 1,300 rows: the file of one row a chunk');
});

t.test('no rows: a file with every column and no row', async (t) => {
  const file = await fileOf([], new ParquetEncodeStage(LAYOUT, 1));
  const meta = parquetMetadata(file);
  t.equal(Number(meta.num_rows), 0);
  t.same(
    meta.schema.filter((e) => e.name === 'f:rec' || e.name === 'longs').map((e) => e.name),
    ['f:rec', 'longs'],
  );
});

t.test('a reader that stops reading stops the rows taken; reading again takes them all', async (t) => {
  const stage = new ParquetEncodeStage(LAYOUT, 1, 'uncompressed', 64, 32);
  const rows = rowsOut(4000);
  let taken = 0;
  const writing = (async () => {
    for (const row of rows) {
      if (!stage.write([row])) await once(stage, 'drain');
      taken++;
    }
    stage.end();
  })();
  await sleep(500);
  t.ok(taken < rows.length / 2, `with nothing read, ${taken} of ${rows.length} rows taken`);
  const chunks: Buffer[] = [];
  for await (const c of stage) chunks.push(c as Buffer);
  await writing;
  const file = Buffer.concat(chunks);
  const read = await parquetReadObjects({ file: file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer, columns: ['f:i'] });
  t.equal(read.length, rows.length, 'every row once read');
});

t.test('destroyed midway: the stage closes, nothing waits', async (t) => {
  const stage = new ParquetEncodeStage(LAYOUT, 1, 'snappy', 64, 32);
  for (const row of rowsOut(200)) stage.write([row]);
  await sleep(50);
  const errors: Error[] = [];
  stage.on('error', (e) => errors.push(e));
  const closed = new Promise((resolve) => stage.once('close', resolve));
  stage.destroy(new Error('client gone'));
  await closed;
  t.ok(stage.destroyed);
  t.same(
    errors.map((e) => e.message),
    ['client gone'],
    'its own error, once',
  );
});

t.test("a Parquet file of a store's Arrow chunks fails with the scan's own error when the scan fails, at its start or later", async (t) => {
  // parquet-wasm reports an input failing at its first batch as 'Dyn casting error', and one failing
  // later not at all: the file ended at the rows before, a shorter file taken for the whole export.
  for (const failAt of [0, 1]) {
    let reads = 0;
    const parts = arrowStreamParts(LAYOUT, 1, PARQUET_UNIONS);
    const chunk = parts.messageOf(parts.columns.batchOf(rowsOut(3)));
    const scan = {
      next: async (): Promise<IteratorResult<RenderedChunk>> => {
        if (reads++ === failAt) throw new Error('the scan thread could not read its part');
        return { done: false, value: { bytes: Buffer.from(chunk), rows: 3, cells: 3 } };
      },
      return: async (): Promise<IteratorResult<RenderedChunk>> => ({ done: true, value: undefined }),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    const source = parquetFromArrowChunks(LAYOUT, 1).source(scan);
    await t.rejects(
      (async () => {
        while ((await source.next()) !== undefined);
      })(),
      { message: 'the scan thread could not read its part' },
      `the scan failing at its read ${failAt}`,
    );
  }
});
