/**
 * The Arrow IPC stream format's stage, after the filter stage (pipeline.ts): batches of rows in,
 * the IPC stream's bytes out (schema first, even for no rows; then a record batch each BATCH_ROWS
 * rows and one for the rest, so memory is bounded by that many rows whatever the table's size).
 * Columns and types: lib/rows/formats/arrow-columns.ts. apache-arrow writes every byte.
 *
 * A store with Arrow chunks (Store.scanChunks with an ArrowBatchSpec: the LMDB store encodes
 * batches on its scan threads, lib/store/lmdb/arrow-chunk.ts) gives the record batch messages
 * alone; arrowChunkSource puts the schema message before them and the end-of-stream marker after,
 * the pieces ArrowStreamParts takes from apache-arrow's own stream writer.
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { RecordBatch } from 'apache-arrow';
import { arrow } from '../../deps/arrow.js';
import { ArrowColumns, type UnionForm } from '../formats/arrow-columns.js';
import type { RowOut, TableLayout } from '../../model/types.js';
import type { ArrowBatchSpec, ChunkScan, RenderedChunk } from '../../store/store.js';
import type { PagedChunkSource } from '../chunk-source.js';

/**
 * Rows gathered into one record batch: a scan batch is 256 rows, and a record batch that small
 * spent most of its time on builders and batch framing (300,000 bench rows: 1,172 batches).
 * 8,192 rows of the bench table are ~3 MB of JS values at most, held once.
 */
export const BATCH_ROWS = 8192;

/** What a reader of Arrow chunks asks of the scan besides its rows (ArrowBatchSpec says what each does; the store's defaults without them). */
export type ArrowReaderNeeds = { readonly unions?: UnionForm } & Pick<ArrowBatchSpec['arrow'], 'aheadParts' | 'threads'>;

/**
 * The ArrowBatchSpec of a scan's Arrow chunks (for the stream, and for Parquet from them): batches
 * of BATCH_ROWS, at most `limit` rows (-1: all), with the reader's `needs`.
 */
export function arrowBatchSpec(limit: number, needs: ArrowReaderNeeds = {}): ArrowBatchSpec {
  const { unions = 'union', aheadParts, threads } = needs;
  return {
    arrow: {
      batchRows: BATCH_ROWS,
      rows: limit,
      ...(unions !== 'union' && { unions }),
      ...(aheadParts !== undefined && { aheadParts }),
      ...(threads !== undefined && { threads }),
    },
  };
}

/**
 * How a scan of a store's Arrow chunks (Store.scanChunks) becomes a body: the chunks to ask for
 * (their unions' form is the body's to say) and the body made of them.
 */
export interface ArrowChunkBody {
  spec(limit: number): ArrowBatchSpec;
  source(scan: ChunkScan): PagedChunkSource;
}

/** The Arrow IPC stream of a store's Arrow chunks (arrowChunkSource). */
export function arrowStreamBody(layout: TableLayout, versions: number): ArrowChunkBody {
  const parts = arrowStreamParts(layout, versions);
  return { spec: (limit) => arrowBatchSpec(limit), source: (scan) => arrowChunkSource(scan, parts) };
}

/**
 * Rows in, the IPC stream out: the schema message before the first batch, a batch message each
 * `batchRows` rows and one for the rest (a batch of no rows when there were none, which carries the
 * schema's types to a reader), then the end-of-stream marker: the pieces of ArrowStreamParts, as
 * the scan threads' chunks are joined (arrowChunkSource).
 */
export class ArrowEncodeStage extends Transform {
  private readonly parts: ArrowStreamParts;
  private wroteAny = false;
  private pending: RowOut[] = [];

  /** `versions`: the request's versions (1: each column its newest value; more: a list per column). */
  constructor(
    layout: TableLayout,
    versions: number,
    private readonly batchRows = BATCH_ROWS,
  ) {
    super({ writableObjectMode: true, writableHighWaterMark: 1 });
    this.parts = arrowStreamParts(layout, versions);
  }

  override _transform(rows: readonly RowOut[], _enc: BufferEncoding, done: TransformCallback): void {
    try {
      // Batches of exactly batchRows, wherever the rows arrive cut: the stream is then the same bytes for the same rows.
      for (const row of rows) {
        this.pending.push(row);
        if (this.pending.length === this.batchRows) this.writePending();
      }
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  private writePending(): void {
    if (!this.wroteAny) this.pushBytes(this.parts.schema);
    this.pushBytes(this.parts.messageOf(this.parts.columns.batchOf(this.pending)));
    this.pending = [];
    this.wroteAny = true;
  }

  private pushBytes(bytes: Uint8Array): void {
    this.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }

  override _flush(done: TransformCallback): void {
    try {
      if (this.pending.length > 0 || !this.wroteAny) this.writePending();
      this.pushBytes(this.parts.end);
      done();
    } catch (e) {
      done(e as Error);
    }
  }
}

/**
 * An IPC stream cut into the pieces a stream of batches encoded apart is joined from: the schema
 * message, each batch's message, the end-of-stream marker. Every piece is written by apache-arrow's
 * RecordBatchStreamWriter: a batch's message is the stream of that batch alone with the schema
 * message before it cut off (checked to be those bytes), so the joined stream is byte for byte
 * the one a single writer writes for the same batches.
 */
export class ArrowStreamParts {
  readonly columns: ArrowColumns;
  /** The schema message. */
  readonly schema: Uint8Array;
  /** The message of a batch of no rows (the stream of an empty scan carries one, as the stage's does). */
  readonly emptyBatch: Uint8Array;
  /** The end-of-stream marker. */
  readonly end: Uint8Array;

  constructor(layout: TableLayout, versions: number, unions: UnionForm = 'union') {
    this.columns = new ArrowColumns(layout, versions, unions);
    const empty = this.columns.batchOf([]);
    const writer = new arrow.RecordBatchStreamWriter();
    writer.reset(undefined, this.columns.schema);
    this.schema = writer.toUint8Array(true).slice();
    writer.write(empty);
    const withBatch = writer.toUint8Array(true);
    writer.close();
    const whole = writer.toUint8Array(true);
    this.emptyBatch = withBatch.slice(this.schema.length);
    this.end = whole.slice(withBatch.length);
  }

  /** The message of `batch`, a batch of this plan's columns. */
  messageOf(batch: RecordBatch): Uint8Array {
    const writer = new arrow.RecordBatchStreamWriter();
    writer.write(batch);
    const stream = writer.toUint8Array(true);
    const n = this.schema.length;
    if (stream.length < n || Buffer.compare(stream.subarray(0, n), this.schema) !== 0) {
      throw new Error('apache-arrow wrote a stream that does not start with the schema message (see lib/rows/stages/arrow.ts)');
    }
    return stream.subarray(n);
  }
}

/** Stream pieces by layout description, versions and union form: built once per table and read (a scan thread's every part, every request), not per scan. */
const partsCache = new WeakMap<TableLayout, Map<string, ArrowStreamParts>>();

/** The ArrowStreamParts of `layout` at `versions` (unions as `unions` says), cached. */
export function arrowStreamParts(layout: TableLayout, versions: number, unions: UnionForm = 'union'): ArrowStreamParts {
  let byPlan = partsCache.get(layout);
  if (byPlan === undefined) partsCache.set(layout, (byPlan = new Map()));
  const key = `${versions} ${unions}`;
  let parts = byPlan.get(key);
  if (parts === undefined) byPlan.set(key, (parts = new ArrowStreamParts(layout, versions, unions)));
  return parts;
}

/**
 * A scan's Arrow chunks (Store.scanChunks with an ArrowBatchSpec) as the whole IPC stream, for a
 * RowStream: the schema message (given once the scan's first chunk is read, so a scan that fails
 * at once still fails before the response's headers), the batches as they come, a batch of no
 * rows when the scan had none, then the end-of-stream marker. `nextRowKey`: the row read past
 * the limit (ArrowBatchSpec's `rows`), once the scan has ended.
 */
export function arrowChunkSource(scan: ChunkScan, parts: ArrowStreamParts): PagedChunkSource {
  let started = false;
  let ended = false;
  let tail: Uint8Array[] = [];
  let first: RenderedChunk | undefined;
  let rows = 0;
  let nextRowKey: Buffer | undefined;
  const piece = (bytes: Uint8Array): RenderedChunk => ({ bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), rows: 0, cells: 0 });
  const read = async (): Promise<RenderedChunk | undefined> => {
    if (first !== undefined) {
      const chunk = first;
      first = undefined;
      return chunk;
    }
    const r = await scan.next();
    return r.done ? undefined : r.value;
  };
  return {
    get nextRowKey() {
      return nextRowKey;
    },
    next: async () => {
      if (!started) {
        started = true;
        first = await read();
        return piece(parts.schema);
      }
      while (!ended) {
        const chunk = await read();
        if (chunk === undefined) {
          ended = true;
          tail = rows === 0 ? [parts.emptyBatch, parts.end] : [parts.end];
          break;
        }
        rows += chunk.rows;
        if (chunk.lastRow !== undefined) nextRowKey = chunk.lastRow.rowKey;
        // A chunk of no bytes (only the row past a limit of 0) is not pushed: an empty push is no data.
        if (chunk.bytes.length > 0) return chunk;
      }
      const bytes = tail.shift();
      return bytes === undefined ? undefined : piece(bytes);
    },
    close: async () => {
      await scan.return();
    },
  };
}
