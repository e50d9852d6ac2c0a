// What a Parquet body asks of a store's scan (parquet-spec.ts): structs for unions, parts ahead, and
// a core left to the writer.
import t from 'tap';
import { parquetChunkSpec, parquetScanThreads, PARQUET_UNIONS } from '../../lib/rows/stages/parquet-spec.js';
import { BATCH_ROWS } from '../../lib/rows/stages/arrow.js';

t.test('a Parquet scan leaves one core to the writer, and uses at least one thread', async (t) => {
  t.equal(parquetScanThreads(1), 1, 'one core: one thread');
  t.equal(parquetScanThreads(2), 1, 'two cores: one thread');
  t.equal(parquetScanThreads(4), 3);
  t.equal(parquetScanThreads(16), 15);
});

t.test("a Parquet scan's spec: unions as structs, four parts ahead, the threads above, the limit as given", async (t) => {
  t.same(parquetChunkSpec(-1), { arrow: { batchRows: BATCH_ROWS, rows: -1, unions: 'struct', aheadParts: 4, threads: parquetScanThreads() } });
  t.equal(parquetChunkSpec(11).arrow.rows, 11);
  t.equal(PARQUET_UNIONS, 'struct');
});
