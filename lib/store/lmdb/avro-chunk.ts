/**
 * The Avro export's stages compiled for the LMDB store's scan threads: the store scan iterator and
 * filter stage (RowCollector, the same rows Store.scan() gives) and the Avro stage's encoding
 * from the rows' cells (lib/model/avro/avro-export.ts, the same values lib/rows/stages/avro.ts
 * writes), each chunk one finished container block (avro-container.ts) with the scan's sync
 * marker, compressed on the thread that encoded it.
 *
 * Why here and not after the scan: encoded on the main thread after Store.scan(), a 1,000,000-row
 * export of the bench table ran at ~100,000 rows/s (9.9 s, a third of it garbage collection)
 * while its JSON export ran at 1,240,000 on the scan threads; a scan thread encodes a row in
 * ~3.5 us (decoding ~1.2, the value ~1.3, avsc ~1), and the scan threads encode in parallel.
 *
 * A compact row whose newest versions are its answer (NewestCells, as the Arrow batches read
 * them) has its value made from its stored bytes (AvroExport.storedRowValue) instead of a row of
 * cells: no row, cell or name objects, and plain values read without a string of their text.
 */
import type { ReadSpec, TableLayout } from '../../model/types.js';
import { avroExportOf, type AvroExport } from '../../model/avro/avro-export.js';
import { avroBlock } from '../../model/avro/avro-container.js';
import type { AvroBlockSpec, RenderedChunk } from '../store.js';
import { CollectedRows } from './collected-rows.js';
import { RowCollector } from './row-collector.js';
import { NewestCells } from './stored-columns.js';

export class AvroChunkEncoder extends CollectedRows {
  protected override readonly rows: RowCollector;
  private readonly exp: AvroExport;
  protected override readonly newest: NewestCells;
  private datums: Buffer;
  private pos = 0;
  private count = 0;
  private cells = 0;

  constructor(
    layout: TableLayout,
    read: ReadSpec,
    private readonly spec: AvroBlockSpec['avro'],
    now: number = Date.now(),
    initialBytes = 512 * 1024,
    copyKeys = false,
  ) {
    super();
    // Made once per layout object (avroExportOf caches it): a scan thread's parts share it.
    this.exp = avroExportOf(layout);
    this.datums = Buffer.allocUnsafe(initialBytes);
    this.rows = new RowCollector(layout, read, (row) => this.encode(this.exp.rowValue(row, this.spec.withSchema), row.cells.length), now, copyKeys);
    this.newest = new NewestCells(layout, read, this.exp.slots, this.exp.slotOf, now);
  }

  protected override storedRow(rowKey: Buffer, value: Buffer, cells: number): void {
    this.encode(this.exp.storedRowValue(rowKey, value, this.newest, this.spec.withSchema), cells);
  }

  /** Bytes of datums encoded since the last chunk was taken. */
  get length(): number {
    return this.pos;
  }

  /** The rows encoded so far as one container block; undefined when none was. */
  takeChunk(): RenderedChunk | undefined {
    if (this.count === 0) return undefined;
    const bytes = avroBlock(this.datums, this.pos, this.count, this.spec.codec, this.spec.sync);
    const chunk = { bytes, rows: this.count, cells: this.cells };
    this.pos = 0;
    this.count = 0;
    this.cells = 0;
    return chunk;
  }

  private encode(value: unknown, cells: number): void {
    let end = this.exp.type.encode(value, this.datums, this.pos);
    // A negative end: the bytes missing. The datums so far move to a buffer with room (doubled).
    while (end < 0) {
      const grown = Buffer.allocUnsafe(Math.max(2 * this.datums.length, this.datums.length - end));
      this.datums.copy(grown, 0, 0, this.pos);
      this.datums = grown;
      end = this.exp.type.encode(value, this.datums, this.pos);
    }
    this.pos = end;
    this.count++;
    this.cells += cells;
  }
}
