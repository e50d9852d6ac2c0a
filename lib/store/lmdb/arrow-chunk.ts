/**
 * The Arrow scan's stages compiled for the LMDB store's scan threads, as avro-chunk.ts does for
 * Avro: the store scan iterator and filter stage (RowCollector, the same rows Store.scan() gives)
 * and the Arrow stage's batches (lib/rows/stages/arrow.ts: ArrowColumns' plan, apache-arrow's
 * builders and stream writer), each chunk one or more record batch messages; the caller writes
 * the schema message and the end of the stream (arrowChunkSource).
 *
 * Why here: the stage on the main thread after Store.scan() ran at 161,547 bench rows/s against
 * 1,862,163 for the JSON scan (bench/README.md), one core doing the row objects, the JSON decode
 * of every value and the builders; on the scan threads both cores do it and the main thread only
 * writes bytes.
 *
 * A table of flat columns read at one version has its compact rows' newest column records read
 * straight into the batch's columns (NewestCells, ArrowBatchFill.addStored), as the JSON scan's
 * CompactRenderer writes them: the filter stage's decisions are made once a column
 * (stored-columns.ts) and a value's text goes into its column without a row, a cell or a string.
 * Through RowCollector's rows a bench row cost a scan thread ~2.9 us, ~60% of it the rows' objects,
 * the strings and their garbage (--cpu-prof, 3,000,000 rows over two threads).
 * test/store/arrow-chunks.test.ts compares the bytes with the reference stages'.
 */
import type { RecordBatch } from 'apache-arrow';
import type { ReadSpec, RowOut, TableLayout } from '../../model/types.js';
import type { LayoutColumns } from '../../rows/formats/layout-columns.js';
import type { ArrowColumns } from '../../rows/formats/arrow-columns.js';
import { arrowStreamParts, type ArrowStreamParts } from '../../rows/stages/arrow.js';
import type { ArrowBatchSpec, RenderedChunk } from '../store.js';
import type { ChunkWriter } from './chunk-render.js';
import { ArrowBatchFill } from '../../rows/formats/arrow-fill.js';
import { CollectedRows } from './collected-rows.js';
import { RowCollector } from './row-collector.js';
import { NEEDS_ROW, NewestCells } from './stored-columns.js';

export class ArrowChunkEncoder extends CollectedRows implements ChunkWriter {
  protected override readonly rows: RowCollector;
  private readonly parts: ArrowStreamParts;
  private readonly fill: BatchMaker;
  /** Flat columns at one version: the compact rows' column records read into this fill directly. */
  private readonly filled: ArrowBatchFill | undefined;
  protected override readonly newest: NewestCells | undefined;
  private pendingCells = 0;
  /** Batch messages encoded since the last chunk was taken, their bytes, rows and cells. */
  private messages: Uint8Array[] = [];
  private bytes = 0;
  private count = 0;
  private cells = 0;
  /** Rows taken into batches so far (against the spec's `rows`). */
  private taken = 0;
  private heldKey: Buffer | undefined;

  constructor(
    layout: TableLayout,
    read: ReadSpec,
    private readonly spec: ArrowBatchSpec['arrow'],
    now: number = Date.now(),
    copyKeys = false,
  ) {
    super();
    this.parts = arrowStreamParts(layout, read.maxVersions, spec.unions ?? 'union');
    const flat = this.parts.columns.flat;
    const fill = flat ? new ArrowBatchFill(this.parts.columns.plan, this.parts.columns.schema, spec.batchRows) : undefined;
    this.fill = fill ?? new HeldRows(this.parts.columns);
    const plan = this.parts.columns.plan;
    this.filled = read.maxVersions === 1 ? fill : undefined;
    this.newest = this.filled === undefined ? undefined : new NewestCells(layout, read, plan.columns.length, slotOfColumn(plan), now);
    // copyKeys (a scan thread reads in place): a row ArrowColumns is given waits while later rows
    // are read, so its key must be its own. A filled row's values are in the batch's columns
    // before the next entry is read (the one row kept, past a limit, is copied).
    this.rows = new RowCollector(layout, read, (row) => this.take(row), now, copyKeys && !flat);
  }

  /** Bytes of batch messages encoded since the last chunk was taken. */
  get length(): number {
    return this.bytes;
  }

  /** The batches encoded so far and the rows still pending as one more batch; undefined when there are none. */
  takeChunk(): RenderedChunk | undefined {
    if (this.fill.rows > 0) this.encodePending();
    if (this.messages.length === 0 && this.heldKey === undefined) return undefined;
    const bytes = this.messages.length === 1 ? toBuffer(this.messages[0]!) : Buffer.concat(this.messages, this.bytes);
    const chunk: RenderedChunk = {
      bytes,
      rows: this.count,
      cells: this.cells,
      lastRow: this.heldKey === undefined ? undefined : { start: bytes.length, rowKey: this.heldKey },
    };
    this.messages = [];
    this.bytes = 0;
    this.count = 0;
    this.cells = 0;
    this.heldKey = undefined;
    return chunk;
  }

  protected override storedRow(rowKey: Buffer, value: Buffer, cells: number): void {
    if (this.limited(rowKey)) return;
    this.filled!.addStored(rowKey, value, this.newest!.starts, this.newest!.ends);
    this.added(cells);
  }

  private take(row: RowOut): void {
    if (this.limited(row.rowKey)) return;
    this.fill.add(row);
    this.added(row.cells.length);
  }

  /** Whether the spec's rows were all taken: the row is then held as the next page's first, and not added. */
  private limited(rowKey: Buffer): boolean {
    const limit = this.spec.rows;
    if (limit < 0 || this.taken < limit) return false;
    this.heldKey = Buffer.from(rowKey);
    return true;
  }

  private added(cells: number): void {
    this.taken++;
    this.pendingCells += cells;
    if (this.fill.rows >= this.spec.batchRows) this.encodePending();
  }

  private encodePending(): void {
    this.count += this.fill.rows;
    const message = this.parts.messageOf(this.fill.take());
    this.messages.push(message);
    this.bytes += message.length;
    this.cells += this.pendingCells;
    this.pendingCells = 0;
  }
}

/** What a batch is made by: ArrowBatchFill, or the rows held for ArrowColumns. */
interface BatchMaker {
  readonly rows: number;
  add(row: RowOut): void;
  take(): RecordBatch;
}

/** Rows held for ArrowColumns.batchOf (tables with lists, maps, structs or unions). */
class HeldRows implements BatchMaker {
  private held: RowOut[] = [];

  constructor(private readonly columns: ArrowColumns) {}

  get rows(): number {
    return this.held.length;
  }

  add(row: RowOut): void {
    this.held.push(row);
  }

  take(): RecordBatch {
    const batch = this.columns.batchOf(this.held);
    this.held = [];
    return batch;
  }
}

/** A returned column's slot: its data column; a column the plan has none for (none in a flat table) takes the rows. */
function slotOfColumn(plan: LayoutColumns): (family: string, qualifier: string) => number {
  return (family, qualifier) => {
    const at = plan.columnIndexOf(family, qualifier);
    return at < 0 ? NEEDS_ROW : at;
  };
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
