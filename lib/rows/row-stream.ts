/**
 * The scan pipeline's last stage: pulls chunks of framed rows from a source only while the socket
 * accepts data and pushes each as one chunk (one write per chunk, not per row). The source is the
 * store's fused loop (Store.scanChunks) where it has one, else the reference stages
 * (stages/pipeline.ts). Destroying the stream (client gone, error) closes the source at once.
 */
import { Readable } from 'node:stream';
import type { TableLayout } from '../model/types.js';
import type { ChunkScan, RenderedChunk, ScanRequest, Store } from '../store/store.js';
import type { ChunkSource } from './chunk-source.js';
import { lendBytes } from './lent-bytes.js';
import type { FramedRenderSpec } from './row-document.js';
import { referenceSource } from './stages/pipeline.js';

/**
 * 64 KiB: a slow client pins at most this plus one chunk (a fast-path chunk is ~256 KiB, a
 * 256-row batch ~75 KB); the scan itself holds no rows.
 */
const HIGH_WATER_MARK = 64 * 1024;

export type { ChunkSource };

/**
 * A scan's rows as chunks of row documents in `spec`'s form and framing: the store's fused loop
 * where it has one, otherwise the reference stages. Shared by GET rows and the export and scan
 * commands.
 */
export function scanSource(store: Store, instance: string, table: string, request: ScanRequest, layout: TableLayout, spec: FramedRenderSpec): ChunkSource {
  return store.scanChunks ? renderedSource(store.scanChunks(instance, table, request, spec)) : referenceSource(store, instance, table, request, layout, spec);
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

/**
 * How a RowStream ends a complete stream: `limit` rows at most are sent (the source may give one
 * more, which is cut off the last chunk and handed to onEnd as the row key of the first row not
 * sent); onEnd is called before the end of the stream is pushed.
 */
export interface StreamEnd {
  readonly limit: number;
  onEnd(rowsSent: number, nextRowKey: Buffer | undefined): void;
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
    // The row past the limit is the chunk's last: cut where it starts, named by its row key.
    const last = chunk.lastRow;
    if (last === undefined) {
      this.destroy(new Error('a scan chunk cut at its limit does not say where its last row starts'));
      return;
    }
    if (last.start > 0) this.push(this.count(chunk.bytes.subarray(0, last.start), chunk.rows - 1, chunk.release));
    this.finish(last.rowKey);
  }

  private count(bytes: Buffer, rows: number, release: (() => void) | undefined): Buffer {
    // Each chunk is pushed whole or cut once (a limit), so its bytes go out in one write.
    if (release !== undefined) lendBytes(bytes, release);
    this.rowsSent += rows;
    this.onRows(this.rowsSent);
    return bytes;
  }

  private finish(nextRowKey: Buffer | undefined): void {
    try {
      this.end?.onEnd(this.rowsSent, nextRowKey);
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
