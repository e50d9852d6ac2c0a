/**
 * RowBatch: rows packed and read back are the rows added, cell by cell (every kind, timestamps or
 * none, exact 64-bit counters, any qualifier text, lengths past one varint byte), in order, across
 * chunks, in slices of any size; released chunks leave the batch empty.
 */
import t from 'tap';
import { RowBatch } from '../../lib/model/cells/row-batch.js';
import type { EncodedCell, RowWrite } from '../../lib/model/types.js';

function rowsFor(count: number): RowWrite[] {
  const rows: RowWrite[] = [];
  for (let i = 0; i < count; i++) {
    const cells: EncodedCell[] = [
      { kind: 'value', family: 'info', qualifier: `q${i}`, schemaId: i % 300, json: JSON.stringify('v'.repeat(i % 200)) },
      { kind: 'value', family: 'strings', qualifier: 'é😀\u0000', timestamp: 1_700_000_000_000 + i, schemaId: 0, json: '"\\u0000é"' },
    ];
    if (i % 3 === 0) cells.push({ kind: 'counter-set', family: 'counters', qualifier: '', value: -9223372036854775808n + BigInt(i) });
    if (i % 3 === 1) cells.push({ kind: 'counter-set', family: 'counters', qualifier: 'c', timestamp: Number.MAX_SAFE_INTEGER, value: 9223372036854775807n });
    if (i % 5 === 0) cells.push({ kind: 'counter-increment', family: 'counters', qualifier: 'n', delta: -1n });
    rows.push({ rowKey: Buffer.from(`key-${i}-${'k'.repeat(i % 150)}`), cells: i % 7 === 0 ? [] : cells });
  }
  return rows;
}

t.test('rows read back as added, in slices of any size', async (t) => {
  const rows = rowsFor(3000);
  const batch = new RowBatch();
  for (const row of rows) batch.add(row);
  t.equal(batch.rows, rows.length);
  t.equal(
    batch.cells,
    rows.reduce((n, r) => n + r.cells.length, 0),
  );
  t.equal(batch.increments, rows.filter((r) => r.cells.some((c) => c.kind === 'counter-increment')).length);
  t.ok(batch.packedBytes > 0);
  for (const size of [1, 7, 1024, 5000]) {
    const back = [...batch.slices(size)];
    t.ok(
      back.every((s, i) => s.length === size || i === back.length - 1),
      `slices of ${size}`,
    );
    t.same(back.flat(), rows, `slices of ${size}: the same rows`);
  }
  t.same(batch.all(), rows);
  t.same([...batch.slices(100, true)].flat(), rows, 'read once more, releasing');
  t.same(batch.all(), [], 'empty once released');
});

t.test('a row larger than a chunk, and an empty batch', async (t) => {
  const big: RowWrite = {
    rowKey: Buffer.alloc(10),
    cells: [{ kind: 'value', family: 'f', qualifier: 'q', schemaId: 1, json: JSON.stringify('x'.repeat(600_000)) }],
  };
  const small: RowWrite = { rowKey: Buffer.from([1]), cells: [] };
  const batch = new RowBatch();
  batch.add(small);
  batch.add(big);
  batch.add(small);
  t.same(batch.all(), [small, big, small]);
  t.same(new RowBatch().all(), []);
  const cleared = new RowBatch();
  cleared.add(small);
  cleared.clear();
  t.same(cleared.all(), []);
});
