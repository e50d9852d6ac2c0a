/**
 * The scan pipeline's last stage: pulls batches from a store scan only while the socket accepts
 * data and pushes each batch as one chunk (one write per batch, not per row), every row framed by
 * CR LF. A store with the fast path (Store.scanChunks) hands over rendered bytes; otherwise rows
 * are serialized here. Destroying the stream (client gone, error) returns the scan at once.
 */
import { Readable } from 'node:stream';
import type { RowOut } from '../model/types.js';
import type { ChunkScan, RenderedChunk, RowScan } from '../store/store.js';
import { ROW_TERMINATOR, type RowSerializer } from './row-format.js';

/**
 * 64 KiB: a slow client pins at most this plus one chunk (a fast-path chunk is ~256 KiB, a
 * 256-row batch ~75 KB); the scan itself holds no rows.
 */
const HIGH_WATER_MARK = 64 * 1024;

/** Where a RowStream's chunks come from. */
export interface ChunkSource {
  next(): Promise<RenderedChunk | undefined>;
  close(): Promise<void>;
}

/** Rows of a store scan, serialized here. */
export function serializedSource(scan: RowScan, serializeRow: RowSerializer): ChunkSource & { frame(rows: readonly RowOut[]): RenderedChunk } {
  const frame = (rows: readonly RowOut[]): RenderedChunk => {
    let chunk = '';
    let cells = 0;
    for (const row of rows) {
      chunk += serializeRow(row) + ROW_TERMINATOR;
      cells += row.cells.length;
    }
    return { bytes: Buffer.from(chunk, 'utf8'), rows: rows.length, cells };
  };
  return {
    frame,
    next: async () => {
      const r = await scan.next();
      return r.done ? undefined : frame(r.value);
    },
    close: async () => {
      await scan.return();
    },
  };
}

/** Chunks a store rendered itself (Store.scanChunks). */
export function renderedSource(scan: ChunkScan): ChunkSource {
  return {
    next: async () => {
      const r = await scan.next();
      return r.done ? undefined : r.value;
    },
    close: async () => {
      await scan.return();
    },
  };
}

export class RowStream extends Readable {
  private busy = false;
  rowsSent = 0;

  constructor(
    private readonly source: ChunkSource,
    private first: RenderedChunk | undefined,
    /** Told the running row count after every batch (the request log reads it on close). */
    private readonly onRows: (rowsSent: number) => void = () => undefined,
  ) {
    super({ highWaterMark: HIGH_WATER_MARK });
  }

  override _read(): void {
    if (this.first) {
      const chunk = this.first;
      this.first = undefined;
      this.push(this.count(chunk));
      return;
    }
    if (this.busy) return;
    this.busy = true;
    this.source.next().then(
      (chunk) => {
        this.busy = false;
        if (this.destroyed) return;
        this.push(chunk === undefined ? null : this.count(chunk));
      },
      (e: unknown) => this.destroy(e as Error),
    );
  }

  private count(chunk: RenderedChunk): Buffer {
    this.rowsSent += chunk.rows;
    this.onRows(this.rowsSent);
    return chunk.bytes;
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.source.close().then(() => callback(err), () => callback(err));
  }
}
