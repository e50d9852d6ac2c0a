/**
 * ArrowBatchFill (lib/rows/formats/arrow-fill.ts), which fills a flat table's batches in typed
 * arrays wherever rows become Arrow (ArrowColumns.batchOf: the Arrow stream and Parquet stages, and
 * a scan thread's held rows): its batches are the bytes apache-arrow's builders give for the same
 * rows (ArrowColumns.builtBatchOf), for every flat value kind (plain and escaped strings, longs past
 * 2^53, 17-digit doubles and exponents, floats, booleans, bytes, nullable columns, a counter), absent
 * cells, batches of one row, of none and of many; a table with a column that is not flat is the
 * builders' alone.
 */
import t from 'tap';
import type { RowOut } from '../../lib/model/types.js';
import { ArrowColumns } from '../../lib/rows/formats/arrow-columns.js';
import { arrowStreamParts } from '../../lib/rows/stages/arrow.js';
import { flatLayout, flatRows } from '../support/flat-table.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { TYPED_LAYOUT } from '../support/typed-table.js';

const LAYOUT = flatLayout();
const ROWS: RowOut[] = flatRows(700).map((r) => ({
  rowKey: r.rowKey,
  cells: r.cells.map((c) => {
    if (c.kind === 'counter-increment') throw new Error('flatRows writes no increments');
    return { family: c.family, qualifier: c.qualifier, timestamp: c.timestamp!, schemaId: 1, json: c.kind === 'value' ? c.json : String(c.value) };
  }),
}));

t.test("the fill's batches are the builders' bytes, at every batch size", async (t) => {
  const parts = arrowStreamParts(LAYOUT, 1);
  t.ok(parts.columns.flat, 'the flat table is filled');
  let compared = 0;
  for (const size of [0, 1, 2, 7, 64, 700]) {
    for (let from = 0; from < ROWS.length; from += Math.max(size, 1)) {
      const rows = ROWS.slice(from, from + size);
      const filled = Buffer.from(parts.messageOf(parts.columns.batchOf(rows)));
      const built = Buffer.from(parts.messageOf(parts.columns.builtBatchOf(rows)));
      if (!filled.equals(built)) t.fail(`rows ${from}..${from + size}: the fill's message differs from the builders'`);
      compared++;
      if (size === 0) break;
    }
  }
  t.ok(compared > 800, `${compared} batches compared`);
});

t.test('a table with a column that is not flat (a record, a map family) is made by the builders', async (t) => {
  t.notOk(new ArrowColumns(parseLayout(TYPED_LAYOUT), 1).flat);
  t.notOk(new ArrowColumns(LAYOUT, 2).flat, 'versions 2: every column a list');
});
