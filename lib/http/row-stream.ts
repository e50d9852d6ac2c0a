/**
 * The scan pipeline's last stage: pulls row batches from a store scan only while the socket
 * accepts data, serializes each batch into one chunk (one write per batch, not per row) and
 * frames every row with CR LF. Destroying the stream (client gone, error) returns the scan at once.
 */
import { Readable } from 'node:stream';
import type { RowOut } from '../model/types.js';
import type { RowScan } from '../store/store.js';
import { ROW_TERMINATOR, type RowSerializer } from './row-format.js';

/**
 * 64 KiB: enough to keep the socket busy between batches (a 256-row batch is ~75 KB of JSON),
 * small enough that a slow client pins almost nothing; the scan itself holds no rows.
 */
const HIGH_WATER_MARK = 64 * 1024;

export class RowStream extends Readable {
  private busy = false;
  rowsSent = 0;

  constructor(
    private readonly scan: RowScan,
    private readonly serializeRow: RowSerializer,
    private first: RowOut[] | undefined,
    /** Told the running row count after every batch (the request log reads it on close). */
    private readonly onRows: (rowsSent: number) => void = () => undefined,
  ) {
    super({ highWaterMark: HIGH_WATER_MARK });
  }

  override _read(): void {
    if (this.first) {
      const batch = this.first;
      this.first = undefined;
      this.push(this.frame(batch));
      return;
    }
    if (this.busy) return;
    this.busy = true;
    this.scan.next().then(
      (r) => {
        this.busy = false;
        if (this.destroyed) return;
        this.push(r.done ? null : this.frame(r.value));
      },
      (e: unknown) => this.destroy(e as Error),
    );
  }

  private frame(rows: readonly RowOut[]): string {
    let chunk = '';
    for (const row of rows) chunk += this.serializeRow(row) + ROW_TERMINATOR;
    this.rowsSent += rows.length;
    this.onRows(this.rowsSent);
    return chunk;
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.scan.return().then(() => callback(err), () => callback(err));
  }
}
