/**
 * The serialize stage of the reference scan pipeline (pipeline.ts): batches of rows in, their row
 * documents out (lib/rows/row-document.ts, the one writer), unframed: the framing stage ends each.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { RowKeyFormat, RowOut } from '../../model/types.js';
import { DocColumns, entityIdText, RowDocumentWriter, type RowRenderSpec } from '../row-document.js';

/** A batch of row documents: each row's document, its row key and the cells written. */
export interface DocumentBatch {
  readonly documents: readonly Buffer[];
  readonly rowKeys: readonly Buffer[];
  readonly cells: number;
}

/** Writes rows as documents; one per (layout key format, render spec) and scan. */
export class RowSerializer {
  private readonly writer: RowDocumentWriter;
  private readonly entityId: (rowKey: Buffer) => string;
  private readonly columns = new DocColumns();

  constructor(format: RowKeyFormat, spec: RowRenderSpec) {
    this.writer = new RowDocumentWriter(Buffer.allocUnsafe(4096), spec);
    this.entityId = entityIdText(format, spec.entityIdForm);
  }

  /** The row's document (a row without cells is written with empty cells, as point gets answer a missing row). */
  document(row: RowOut): Buffer {
    const w = this.writer;
    w.pos = 0;
    w.beginRow(this.entityId(row.rowKey));
    for (const cell of row.cells) w.cellText(this.columns.of(cell.family, cell.qualifier), cell.timestamp, cell.json, cell.schemaId);
    w.endRow(true);
    return Buffer.from(w.buf.subarray(0, w.pos));
  }

  batch(rows: readonly RowOut[]): DocumentBatch {
    let cells = 0;
    const documents = rows.map((row) => {
      cells += row.cells.length;
      return this.document(row);
    });
    return { documents, rowKeys: rows.map((r) => r.rowKey), cells };
  }
}

export class SerializeStage extends Transform {
  private readonly serializer: RowSerializer;

  constructor(format: RowKeyFormat, spec: RowRenderSpec) {
    super({ objectMode: true, highWaterMark: 1 });
    this.serializer = new RowSerializer(format, spec);
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    done(null, this.serializer.batch(rows));
  }
}
