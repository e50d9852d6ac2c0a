/**
 * A Bigtable scan: rows of a key range read from ReadRows streams as wire bytes (read-rows-wire.ts),
 * assembled and picked (row-assembler.ts), handed over in batches with backpressure. It reaches
 * Bigtable and its store only through the ScanTable it opens and the ScanCounts it reports to.
 */
import type { RowgateError } from '../../errors.js';
import type { RowOut, TableLayout } from '../../model/types.js';
import { CellPicker } from '../cell-picker.js';
import { scanRange } from '../key-range.js';
import type { RowScan, ScanRequest } from '../store.js';
import type { ReadRowsRequest, ReadRowsStream } from './bigtable-client.js';
import { buildReadFilter } from './read-filter.js';
import { forEachChunk, newFlatChunk, type FlatChunk } from './read-rows-wire.js';
import { ChunkMerger, pickRow, type CounterColumns, type RawRow } from './row-assembler.js';

/** Rows per batch handed to a scan's consumer. */
const SCAN_BATCH_ROWS = 256;
/**
 * How long a scan waits for more rows before handing over a partial batch. On the emulator (one
 * row per ReadRows message) handing over whatever had arrived made batches of a row or two, one
 * socket write each: `writev` was 32% of the gateway's CPU and the scan ran at 0.30 of the
 * client's ReadRows. Filling batches cut writev to 2%. The bound keeps a slow stream's rows from
 * waiting long for company.
 */
const SCAN_FILL_MS = 20;
/**
 * Rows a scan buffers ahead of its consumer: the stream flows while the consumer works on the
 * previous batch (one row per ReadRows message on the emulator; pulling row by row gave batches
 * of one row and half the speed), and pauses beyond this, which stops gRPC reading from the server.
 */
const SCAN_QUEUE_ROWS = 1024;

/**
 * The table a scan reads, as its store opened it: all the scan asks of Bigtable and of the store.
 */
export interface ScanTable {
  readonly layout: TableLayout;
  readonly counters: CounterColumns;
  /** A ReadRows stream of raw ReadRowsResponse bytes over the table (read-rows-wire.ts decodes them). */
  readRows(request: ReadRowsRequest): ReadRowsStream;
  /** The coded error of a failed stream; `doing` says what failed. */
  failure(e: unknown, doing: string): RowgateError;
}

/** What a scan tells its store. */
export interface ScanCounts {
  /** The scan opened (+1) or finished (-1): once each, and never for a scan of no rows (limit 0). */
  open(delta: 1 | -1): void;
  /** Rows received from Bigtable (before the gateway's own row-key and cell checks). */
  received(rows: number): void;
}

/**
 * A scan over one ReadRows stream (or several: when a rowsLimit was reached and the picker dropped
 * rows, the next stream continues after the last row seen). At most SCAN_QUEUE_ROWS rows are
 * buffered ahead of the consumer, then the stream pauses and gRPC flow control holds the server
 * back; return() cancels the call at once. The table is opened with the first batch.
 */
export class BigtableScan implements RowScan {
  private stream: ReadRowsStream | undefined;
  private table: ScanTable | undefined;
  private picker: CellPicker | undefined;
  private merger = new ChunkMerger();
  private readonly flat: FlatChunk = newFlatChunk();
  private readonly onChunk = (chunk: FlatChunk): void => {
    const raw = this.merger.pushFlat(chunk);
    if (raw) {
      this.ready.push(raw);
      this.lastKey = raw.rowKey;
      this.rowsInStream++;
      this.counts.received(1);
    }
  };
  /** Set when a partial batch has waited SCAN_FILL_MS for more rows. */
  private fillExpired = false;
  private readonly ready: RawRow[] = [];
  private remaining: number;
  private finished = false;
  private ended = false;
  private error: unknown;
  private wake: (() => void) | undefined;
  private lastKey: Buffer | undefined;
  private rowsInStream = 0;
  private streamLimit = 0;
  private readonly filterRows: ((key: Buffer) => boolean) | undefined;

  constructor(
    private readonly open: () => Promise<ScanTable>,
    private readonly request: ScanRequest,
    private readonly counts: ScanCounts,
  ) {
    this.remaining = request.limit < 0 ? Infinity : request.limit;
    this.filterRows = request.filter ? (key: Buffer) => request.filter!.matches(key) : undefined;
    if (this.remaining > 0) this.counts.open(1);
    else this.finished = true;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<RowOut[]>> {
    if (this.finished) return { done: true, value: undefined };
    try {
      if (!this.table) {
        this.table = await this.open();
        this.picker = new CellPicker(this.table.layout, this.request.read);
        if (!this.openStream(undefined)) {
          this.finish();
          return { done: true, value: undefined };
        }
      }
      const batch: RowOut[] = [];
      let fillTimer: NodeJS.Timeout | undefined;
      this.fillExpired = false;
      try {
        while (batch.length < SCAN_BATCH_ROWS && this.remaining > 0) {
          const raw = this.readRaw();
          if (raw === undefined) {
            if (this.error !== undefined) throw this.table.failure(this.error, `scanning table ${this.table.layout.name}`);
            if (this.ended) {
              // A rowsLimit cut the stream short while rows were dropped: continue after the last row.
              if (this.rowsInStream >= this.streamLimit && this.streamLimit > 0 && this.lastKey && this.openStream(this.lastKey)) continue;
              this.remaining = 0;
              break;
            }
            // Wait for a fuller batch (one socket write per batch), but not beyond SCAN_FILL_MS.
            if (batch.length > 0) {
              if (this.fillExpired) break;
              fillTimer ??= setTimeout(() => {
                this.fillExpired = true;
                this.wake?.();
              }, SCAN_FILL_MS);
            }
            await new Promise<void>((resolve) => {
              this.wake = resolve;
            });
            this.wake = undefined;
            continue;
          }
          if (this.filterRows && !this.filterRows(raw.rowKey)) continue;
          const row = pickRow(raw, this.picker!, this.table.counters);
          if (!row) continue;
          batch.push(row);
          this.remaining--;
        }
      } finally {
        if (fillTimer) clearTimeout(fillTimer);
      }
      if (this.remaining <= 0) this.finish();
      return batch.length > 0 ? { done: false, value: batch } : { done: true, value: undefined };
    } catch (e) {
      this.finish();
      throw e;
    }
  }

  async return(): Promise<IteratorResult<RowOut[]>> {
    this.finish();
    return { done: true, value: undefined };
  }

  /** The next committed row already received, or undefined when none is buffered. */
  private readRaw(): RawRow | undefined {
    const row = this.ready.shift();
    // Below half the queue, the stream may flow again (gRPC flow control holds the server meanwhile).
    if (this.ready.length < SCAN_QUEUE_ROWS / 2 && this.stream?.isPaused()) this.stream.resume();
    return row;
  }

  private onResponse(message: Buffer): void {
    try {
      forEachChunk(message, this.flat, this.onChunk);
    } catch (e) {
      // A message that does not decode ends the scan with an error (thrown from next()), not the process.
      this.error = e;
      this.closeStream();
    }
    if (this.ready.length >= SCAN_QUEUE_ROWS) this.stream?.pause();
    this.wake?.();
  }

  /** Opens the ReadRows stream for the scan's range (after `after`, when continuing); false when the range is empty. */
  private openStream(after: Buffer | undefined): boolean {
    const t = this.table!;
    const { start, end } = scanRange(this.request);
    if (start && end && Buffer.compare(start, end) >= 0) return false;
    const range: { startKeyClosed?: Buffer; startKeyOpen?: Buffer; endKeyOpen?: Buffer } = {};
    if (after) range.startKeyOpen = after;
    else if (start && start.length > 0) range.startKeyClosed = start;
    if (end) range.endKeyOpen = end;
    // A wildcard's row-key regex goes first in the filter chain, so Bigtable sends only matching
    // rows (matches() still checks each one). Every row Bigtable returns then matches and has
    // selected cells (nearly always), so the limit goes down too; the continuation above covers
    // the rare row the picker drops. A filter without a regex is checked here only: no limit.
    const rowKeyRegex = this.request.filter?.rowKeyRegex;
    const exact = this.filterRows === undefined || rowKeyRegex !== undefined;
    this.streamLimit = exact && Number.isFinite(this.remaining) ? this.remaining : 0;
    this.rowsInStream = 0;
    this.ended = false;
    this.merger = new ChunkMerger();
    this.closeStream();
    const cellFilter = buildReadFilter(t.layout, this.request.read);
    const filter =
      rowKeyRegex === undefined
        ? cellFilter
        : cellFilter
          ? { chain: { filters: [{ rowKeyRegexFilter: rowKeyRegex }, cellFilter] } }
          : { rowKeyRegexFilter: rowKeyRegex };
    const stream = t.readRows({
      rows: { rowRanges: [range] },
      ...(filter ? { filter } : {}),
      ...(this.streamLimit > 0 ? { rowsLimit: this.streamLimit } : {}),
    });
    stream.on('data', (message: Buffer) => {
      if (stream === this.stream) this.onResponse(message);
    });
    stream.on('end', () => {
      if (stream === this.stream) this.ended = true;
      this.wake?.();
    });
    stream.on('error', (e: unknown) => {
      if (stream === this.stream && !this.finished) this.error = e;
      this.wake?.();
    });
    this.stream = stream;
    return true;
  }

  private closeStream(): void {
    const stream = this.stream;
    if (!stream) return;
    this.stream = undefined;
    stream.abort();
    stream.destroy();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.ready.length = 0;
    this.closeStream();
    this.counts.open(-1);
    this.wake?.();
  }
}
