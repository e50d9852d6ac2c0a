/**
 * Streams the rows of a selection (a store scan, or one row by entity id) as revision 3 row JSON
 * documents, one per line, into an Output: the store is read one chunk at a time (rendered by the
 * store's fast path where it has one, see scanSource) and the next chunk only once the output has
 * drained. One row is read with a point get and printed as GET rows?eid prints it (a missing row
 * with no cells).
 */
import { framedRows, rowRenderSpec } from '../../lib/rows/row-format.js';
import type { RowTerminator } from '../../lib/rows/row-document.js';
import { renderedSource, scanSource, type ChunkSource } from '../../lib/rows/row-stream.js';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RowOut, TableLayout } from '../../lib/model/types.js';
import { AvroEncodeStage, type AvroCodec } from '../../lib/rows/stages/avro.js';
import { filteredRows } from '../../lib/rows/stages/pipeline.js';
import type { RenderedChunk, ScanRequest, Store } from '../../lib/store/store.js';
import { avroHeader, newSyncMarker } from '../../lib/model/avro/avro-container.js';
import { avroExportOf } from '../../lib/model/avro/avro-export.js';
import type { Output } from './output.js';
import type { RowSelection } from './read-options.js';

export interface DumpResult {
  readonly rows: number;
  readonly cells: number;
  /** Bytes written. */
  readonly bytes: number;
}

/** What to dump and where: the rows of `selection` of one table into `output`. */
export interface DumpArgs {
  readonly store: Store;
  readonly instance: string;
  readonly table: string;
  readonly layout: TableLayout;
  readonly selection: RowSelection;
  readonly output: Output;
  /** After each row: CR LF for the row stream format, LF for a terminal (row documents only). */
  readonly terminator: RowTerminator;
  /** Told the running totals after each chunk written. */
  readonly onBatch?: (done: DumpResult) => void;
}

export async function dumpRows(args: DumpArgs): Promise<DumpResult> {
  const { selection } = args;
  const source =
    selection.kind === 'scan'
      ? scanSource(args.store, args.instance, args.table, selection.request, args.layout, rowRenderSpec(3, args.terminator))
      : pointSource(args, selection);
  return dumpSource(args, source);
}

/**
 * A source's chunks into the output, each once the output has drained, counted (`bytes`: those
 * written before, a file's header); the source is closed whatever happens. The row documents, the
 * Avro blocks and the Parquet file from Arrow batches (export-parquet.ts) are written by it.
 */
export async function dumpSource(args: Pick<DumpArgs, 'output' | 'onBatch'>, source: ChunkSource, bytes = 0): Promise<DumpResult> {
  const done = { rows: 0, cells: 0, bytes };
  try {
    for (let chunk = await source.next(); chunk !== undefined; chunk = await source.next()) {
      done.rows += chunk.rows;
      done.cells += chunk.cells;
      done.bytes += chunk.bytes.length;
      // A scan thread's chunk goes back to it once written (a sink only: Output.write).
      await args.output.write(chunk.bytes, chunk.release);
      args.onBatch?.({ ...done });
    }
  } finally {
    await source.close();
  }
  return done;
}

/** One row by key, as one chunk (none with --limit 0, as GET rows?eid=E&limit=0). */
function pointSource(
  args: Pick<DumpArgs, 'store' | 'instance' | 'table' | 'layout' | 'terminator'>,
  selection: Extract<RowSelection, { kind: 'row' }>,
): ChunkSource {
  let done = selection.limit === 0;
  return {
    next: async (): Promise<RenderedChunk | undefined> => {
      if (done) return undefined;
      done = true;
      const [row] = await args.store.get(args.instance, args.table, [selection.rowKey], selection.read);
      return { bytes: framedRows([row!], args.layout.keyFormat, 3, args.terminator), rows: 1, cells: row!.cells.length };
    },
    close: async () => undefined,
  };
}

/**
 * The rows of a selection as an Avro object container file into an Output, encoded from the
 * rows' cells: a scan as blocks by a store that encodes them itself (dumpAvroBlocks), else
 * through the Avro stage (lib/rows/stages/avro.ts). `codec`: the blocks' codec (default null).
 */
export async function dumpAvro(args: Omit<DumpArgs, 'terminator'> & { readonly codec?: AvroCodec }): Promise<DumpResult> {
  const { selection } = args;
  if (selection.kind === 'scan' && args.store.scanChunks !== undefined) return dumpAvroBlocks(args, selection.request, args.codec ?? 'null');
  return dumpThroughStage(args, new AvroEncodeStage(args.layout, true, args.codec));
}

/**
 * A scan as an Avro file from a store that encodes blocks itself (Store.scanChunks with an
 * AvroBlockSpec; the LMDB store encodes them on its scan threads): the header, then each block
 * as the store gives it, written as the output drains.
 */
async function dumpAvroBlocks(args: Omit<DumpArgs, 'terminator'>, request: ScanRequest, codec: AvroCodec): Promise<DumpResult> {
  const sync = newSyncMarker();
  const header = await avroHeader(avroExportOf(args.layout).type, codec, sync);
  await args.output.write(header);
  return dumpSource(
    args,
    renderedSource(args.store.scanChunks!(args.instance, args.table, request, { avro: { withSchema: true, codec, sync } })),
    header.length,
  );
}

/**
 * The rows of a selection through a format's stage (rows in, the file's bytes out) into an Output,
 * written as the output drains: the store scan and the filter stage, or one row (--eid) by a
 * point get. The Avro export's other stores and the Parquet export (export-parquet.ts) run it.
 */
export async function dumpThroughStage(args: Omit<DumpArgs, 'terminator'>, stage: Transform): Promise<DumpResult> {
  const { selection } = args;
  const rows =
    selection.kind === 'scan'
      ? filteredRows(args.store, args.instance, args.table, selection.request, args.layout)
      : Readable.from(selection.limit === 0 ? [] : [await args.store.get(args.instance, args.table, [selection.rowKey], selection.read)], { objectMode: true });
  const done = { rows: 0, cells: 0, bytes: 0 };
  const counted = new Transform({
    objectMode: true,
    transform: (batch: readonly RowOut[], _enc, next) => {
      done.rows += batch.length;
      for (const row of batch) done.cells += row.cells.length;
      next(null, batch);
    },
  });
  const sink = new Writable({
    write: (chunk: Buffer, _enc, next) => {
      done.bytes += chunk.length;
      args.output.write(chunk).then(() => {
        args.onBatch?.({ ...done });
        next();
      }, next);
    },
  });
  await pipeline(rows, counted, stage, sink);
  return done;
}
