/**
 * The filter stage of the reference scan pipeline (pipeline.ts): batches of rows in, the same rows
 * with only the cells the read returns out (CellPicker: the selected columns, the time range, the
 * family's TTL and max_versions, `versions` per column, counters' latest value). A row left with
 * no cell is dropped, as a scan returns only rows with a selected cell. Stores may push some of
 * this down (Bigtable filters server-side); applying the same read again changes nothing, so the
 * stage always runs and the result never depends on what a store pushed down.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { CellOut, ReadSpec, RowOut, TableLayout } from '../../model/types.js';
import { CellPicker } from '../../store/cell-picker.js';

/** The row's cells the read returns (stored order kept). */
export function pickCells(picker: CellPicker, row: RowOut): CellOut[] {
  picker.beginRow();
  return row.cells.filter((c) => picker.keep(c.family, c.qualifier, c.timestamp));
}

export class FilterStage extends Transform {
  private readonly picker: CellPicker;

  constructor(layout: TableLayout, read: ReadSpec, now: number = Date.now()) {
    super({ objectMode: true, highWaterMark: 1 });
    this.picker = new CellPicker(layout, read, now);
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    const kept: RowOut[] = [];
    for (const row of rows) {
      const cells = pickCells(this.picker, row);
      if (cells.length > 0) kept.push({ rowKey: row.rowKey, cells });
    }
    done(null, kept.length > 0 ? kept : undefined);
  }
}
