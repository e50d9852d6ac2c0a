/**
 * The scan pipeline's last stage: pulls batches from a store scan only while the socket accepts
 * data and pushes each batch as one chunk (one write per batch, not per row), every row framed by
 * CR LF. A store with the fast path (Store.scanChunks) hands over rendered bytes; otherwise rows
 * are serialized here. Destroying the stream (client gone, error) returns the scan at once.
 */
import { Readable } from 'node:stream';
import type { Revision } from '../config/config.js';
import type { RowKeyFormat, RowOut } from '../model/types.js';
import type { ChunkScan, RenderedChunk, RowScan, ScanRequest, Store } from '../store/store.js';
import { lendBytes } from './lent-bytes.js';
import { lastRowOf, ROW_TERMINATOR, rowRenderSpec, rowSerializer, type RowSerializer } from './row-format.js';

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

/**
 * A scan's rows as chunks of `revision` row JSON, each row followed by `terminator`: the store's
 * fast path (rendered bytes) where it has one and the terminator is the row stream's CR LF,
 * otherwise rows serialized here. Shared by GET rows and the export and scan commands.
 */
export function scanSource(
  store: Store,
  instance: string,
  table: string,
  request: ScanRequest,
  format: RowKeyFormat,
  revision: Revision,
  terminator: string = ROW_TERMINATOR,
): ChunkSource {
  return store.scanChunks && terminator === ROW_TERMINATOR
    ? renderedSource(store.scanChunks(instance, table, request, rowRenderSpec(revision)))
    : serializedSource(store.scan(instance, table, request), rowSerializer(format, revision), terminator);
}

/** Rows of a store scan, serialized here. */
function serializedSource(scan: RowScan, serializeRow: RowSerializer, terminator: string): ChunkSource {
  const frame = (rows: readonly RowOut[]): RenderedChunk => {
    let chunk = '';
    let cells = 0;
    for (const row of rows) {
      chunk += serializeRow(row) + terminator;
      cells += row.cells.length;
    }
    return { bytes: Buffer.from(chunk, 'utf8'), rows: rows.length, cells };
  };
  return {
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
function renderedSource(scan: ChunkScan): ChunkSource {
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

/**
 * How a RowStream ends a complete stream: `limit` rows at most are sent (the source may give one
 * more, which is cut off the last chunk and handed to onEnd as the first row not sent);
 * onEnd is called before the end of the stream is pushed.
 */
export interface StreamEnd {
  readonly limit: number;
  onEnd(rowsSent: number, nextRow: Buffer | undefined): void;
}

export class RowStream extends Readable {
  private busy = false;
  rowsSent = 0;

  constructor(
    private readonly source: ChunkSource,
    private first: RenderedChunk | undefined,
    /** Told the running row count after every batch (the request log reads it on close). */
    private readonly onRows: (rowsSent: number) => void = () => undefined,
    private readonly end?: StreamEnd,
  ) {
    super({ highWaterMark: HIGH_WATER_MARK });
  }

  override _read(): void {
    if (this.first) {
      const chunk = this.first;
      this.first = undefined;
      this.deliver(chunk);
      return;
    }
    if (this.busy) return;
    this.busy = true;
    this.source.next().then(
      (chunk) => {
        this.busy = false;
        if (this.destroyed) return;
        if (chunk === undefined) this.finish(undefined);
        else this.deliver(chunk);
      },
      (e: unknown) => this.destroy(e as Error),
    );
  }

  /** Pushes a chunk; per chunk, never per row, except for the one row a limit cuts off. */
  private deliver(chunk: RenderedChunk): void {
    const limit = this.end?.limit ?? -1;
    if (limit < 0 || this.rowsSent + chunk.rows <= limit) {
      this.push(this.count(chunk.bytes, chunk.rows, chunk.release));
      return;
    }
    // The row past the limit is the chunk's last: every row ends with CR LF, which no document holds.
    const bytes = chunk.bytes;
    const last = lastRowOf(bytes);
    const start = bytes.length - 2 - last.length;
    const nextRow = Buffer.from(last);
    if (start > 0) this.push(this.count(bytes.subarray(0, start), chunk.rows - 1, chunk.release));
    this.finish(nextRow);
  }

  private count(bytes: Buffer, rows: number, release: (() => void) | undefined): Buffer {
    // Each chunk is pushed whole or cut once (a limit), so its bytes go out in one write.
    if (release !== undefined) lendBytes(bytes, release);
    this.rowsSent += rows;
    this.onRows(this.rowsSent);
    return bytes;
  }

  private finish(nextRow: Buffer | undefined): void {
    try {
      this.end?.onEnd(this.rowsSent, nextRow);
    } catch (e) {
      this.destroy(e as Error);
      return;
    }
    this.push(null);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.source.close().then(
      () => callback(err),
      () => callback(err),
    );
  }
}
