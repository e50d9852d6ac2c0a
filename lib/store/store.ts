/**
 * The Store interface: what the HTTP layer and the command line need from a wide-column store.
 * Both backends (lmdb = embedded default, bigtable) implement it, and one conformance suite
 * (test/store/conformance.ts) pins its behaviour, so the layers above never know which one runs.
 */
import type { FramedRenderSpec, RowRenderSpec } from '../rows/row-document.js';
import type { ReadSpec, RowKeyFormat, RowOut, RowWrite, SchemaEntry, SchemaTable, TableLayout, Timestamp } from '../model/types.js';
import type { KeySplit } from './key-splits.js';
import type { AvroCodec } from '../model/avro/avro-codecs.js';

/** The data version every instance reports, as the original's system table did (docs/data-model.md, "Instances and versions"). */
export const DATA_VERSION = 'system-2.0';

export interface InstanceMetadata {
  readonly name: string;
  readonly dataVersion: string;
  readonly schemaTable: readonly SchemaEntry[];
  readonly tables: readonly { readonly name: string; readonly layout: Record<string, unknown> }[];
}

/**
 * Keeps only rows whose key matches (wildcard entity ids); `prefix` narrows the scanned range, and
 * a store that filters server-side sends `rowKeyRegex` (an RE2 pattern, as bytes, fully matching
 * exactly the keys `matches` accepts), still checking `matches` itself.
 */
export interface RowKeyFilter {
  readonly prefix?: Buffer;
  readonly rowKeyRegex?: Buffer;
  matches(rowKey: Buffer): boolean;
}

export interface ScanRequest {
  /**
   * Inclusive start row key; undefined = first row. Bounds of any length (longer than
   * maxRowKeyBytes too) select exactly [start, end) in row-key byte order.
   */
  readonly start?: Buffer;
  /** Exclusive end row key; undefined = past the last row. */
  readonly end?: Buffer;
  readonly filter?: RowKeyFilter;
  /** Rows to return at most; -1 = all. */
  readonly limit: number;
  readonly read: ReadSpec;
}

/**
 * A scan: batches of rows in row-key byte order. Only rows with at least one selected cell are
 * returned. Reading is lazy (a batch is read when asked for); `return()` releases everything at once.
 */
export type RowScan = AsyncIterableIterator<RowOut[]> & { return(): Promise<IteratorResult<RowOut[]>> };

/** A batch of rows already rendered: each row's JSON document followed by its terminator. */
export interface RenderedChunk {
  readonly bytes: Buffer;
  readonly rows: number;
  /** Cells in those rows (export's progress and summary count them). */
  readonly cells: number;
  /**
   * Gives the memory of `bytes` back to the store for its next chunks, to be called once nothing
   * holds `bytes` any more (written out): `bytes` is then emptied. Optional both ways: a store
   * may give none, and a consumer that never calls it leaves the memory to the garbage collector.
   */
  readonly release?: () => void;
  /**
   * Where the chunk's last row starts in `bytes`, and its row key: a scan cut at its limit ends
   * there and names that row as the next page's start. Scans give it; point gets need not.
   */
  readonly lastRow?: { readonly start: number; readonly rowKey: Buffer };
}

/**
 * A scan's rows as Avro: each chunk one block of an object container file of the table's export
 * record (lib/model/avro/avro-export.ts), compressed by `codec` and ending in the file's `sync`
 * marker; the caller writes the header (lib/model/avro/avro-container.ts).
 */
export interface AvroBlockSpec {
  readonly avro: {
    /** Cells carry their writer schema id (false: -1, as revision 1's documents have none). */
    readonly withSchema: boolean;
    readonly codec: AvroCodec;
    readonly sync: Uint8Array;
  };
}

/**
 * A scan's rows as Arrow: each chunk one or more record batch messages of an IPC stream, each batch
 * `batchRows` rows of the column plan lib/rows/formats/arrow-columns.ts makes for the read's
 * versions (a part's or the scan's last batch the rest); the caller writes the schema message
 * before them and the end-of-stream marker after (lib/rows/stages/arrow.ts, arrowChunkSource).
 */
export interface ArrowBatchSpec {
  readonly arrow: {
    readonly batchRows: number;
    /**
     * Rows encoded at most (-1: all). A scan asks for one row more than its limit, to learn where
     * the next page starts: that row is not encoded, and the chunk names it in `lastRow` (`start`
     * the chunk's length, the row not counted in `rows`).
     */
    readonly rows: number;
    /** How union columns are typed (arrow-columns.ts UnionForm): Arrow's union unless `struct` (for Parquet). */
    readonly unions?: 'struct';
    /**
     * Where a store renders a scan in parts on several threads (the LMDB scan pool): parts each
     * thread may render ahead of the one being read (default 2). A reader that holds its thread
     * for long stretches wants more, so the threads do not run dry meanwhile: Parquet's writer
     * (lib/rows/stages/parquet-arrow.ts).
     */
    readonly aheadParts?: number;
    /**
     * Where a store renders a scan on several threads: threads at most for this scan (the store's
     * own count without it). A reader that keeps its own thread busy leaves a core to it:
     * Parquet's writer (lib/rows/stages/parquet-spec.ts).
     */
    readonly threads?: number;
  };
}

/** What a chunk scan writes: row documents, each followed by its terminator, Avro blocks or Arrow record batches. */
export type ChunkSpec = FramedRenderSpec | AvroBlockSpec | ArrowBatchSpec;

/** A fast-path scan: rendered batches, with the same laziness and `return()` as RowScan. */
export type ChunkScan = AsyncIterableIterator<RenderedChunk> & { return(): Promise<IteratorResult<RenderedChunk>> };

/** A delete: the whole row, a family, or one column; all versions, or those at or before a timestamp. */
export interface RowDelete {
  readonly rowKey: Buffer;
  readonly family?: string;
  readonly qualifier?: string;
  readonly upToTimestamp?: Timestamp;
}

export type { FramedRenderSpec, RowRenderSpec };

/**
 * A record committed in the same transaction as a batch of rows (Store.writePacked): where a
 * `rowgate import` stands, so that a crash between a batch's commit and any record written after
 * it cannot make --resume apply the batch again (its counter increments twice).
 */
export interface BatchMarker {
  readonly key: string;
  /**
   * The value the marker must hold before this batch (undefined: no marker): a batch that finds
   * another (the batch before it did not commit, two writes being in flight) is refused whole, so
   * the marker never moves past a batch that is not in the table.
   */
  readonly expected: string | undefined;
  /** The marker's value once the batch is committed. */
  readonly value: string;
}

/** How a store wants rows packed for writePacked (row-packer.ts makes the packer, on any thread). */
export type StorePacking = 'lmdb';

/** Rows packed by a store's packer (row-packer.ts): one transferable buffer. */
export interface PackedRows {
  /** The packed rows; its ArrayBuffer is the batch's own (transferable). */
  readonly bytes: Uint8Array;
  readonly rows: number;
}

export interface Store {
  readonly kind: 'lmdb' | 'bigtable';

  createInstance(name: string): Promise<void>;
  listInstances(): Promise<string[]>;
  instanceMetadata(instance: string): Promise<InstanceMetadata>;
  /** The instance's schema table (RG_ERR_INSTANCE_NOT_FOUND when the instance does not exist). */
  schemaTable(instance: string): Promise<SchemaTable>;

  createTable(instance: string, layout: TableLayout): Promise<void>;
  listTables(instance: string): Promise<string[]>;
  /** RG_ERR_INSTANCE_NOT_FOUND / RG_ERR_TABLE_NOT_FOUND when absent. */
  getLayout(instance: string, table: string): Promise<TableLayout>;
  /**
   * Optional: getLayout() without its promise, for a store that has its layouts at hand (the same
   * layout, the same errors, thrown). A point read awaited two promises for it otherwise.
   */
  layoutNow?(instance: string, table: string): TableLayout;

  /**
   * Point gets: one RowOut per key, in the order given; a missing row has no cells. A key longer
   * than maxRowKeyBytes is a missing row, never an error (no write can have stored it).
   */
  get(instance: string, table: string, rowKeys: readonly Buffer[], read: ReadSpec): Promise<RowOut[]>;
  /**
   * Optional fast path of get(): the same rows (every key asked for, a missing row with no cells),
   * rendered straight into response bytes, byte-identical to serializing get()'s rows with
   * lib/rows/row-format.ts. Stores without it are served through get().
   */
  getChunk?(instance: string, table: string, rowKeys: readonly Buffer[], read: ReadSpec, render: RowRenderSpec): RenderedChunk;
  scan(instance: string, table: string, request: ScanRequest): RowScan;
  /**
   * Optional fast path of scan(): the same rows, rendered straight into the response bytes
   * (byte-identical to serializing scan()'s rows with lib/rows/row-format.ts), or encoded as Avro
   * blocks (the values lib/rows/stages/avro.ts encodes from scan()'s rows) or Arrow record batches
   * (the batches lib/rows/stages/arrow.ts encodes from them). Stores without it are served
   * through scan().
   */
  scanChunks?(instance: string, table: string, request: ScanRequest, render: ChunkSpec): ChunkScan;

  /**
   * Writes a batch of rows (cells already validated and encoded). Cells without a timestamp get
   * the server time, taken once per row. Acknowledged (resolved) only once durable; on the embedded
   * store the whole batch commits atomically.
   */
  write(instance: string, table: string, rows: readonly RowWrite[]): Promise<void>;
  /**
   * write() of rows handed over a slice at a time (a large POST): one atomic batch, its rows
   * turned into objects as the store takes them where it can, so they never all exist at once.
   */
  writeSlices(instance: string, table: string, slices: Iterable<readonly RowWrite[]>): Promise<void>;
  /**
   * How this store wants rows packed for writePacked (`rowgate import` packs them on its parsing
   * threads); undefined: it takes row objects only.
   */
  readonly packing: StorePacking | undefined;
  /**
   * Writes one batch given in parts, as write() of their rows one part after another, atomically:
   * parts packed by this store's packer (PackedRows) and parts of row objects (rows the packed
   * form does not carry, such as counter increments). The store picks its own way to write them.
   */
  writePacked(instance: string, table: string, parts: readonly (PackedRows | readonly RowWrite[])[], marker?: BatchMarker): Promise<void>;
  /**
   * The value of the marker `key` as the last batch committed with it left it; undefined when
   * none, and always on a store whose writePacked cannot commit a marker with its batch (Bigtable:
   * no transaction spans rows and a record), which ignores the markers it is given.
   */
  batchMarker(key: string): Promise<string | undefined>;
  /** Removes the marker `key` (an import that ended well, or one started anew). */
  clearBatchMarker(key: string): Promise<void>;
  delete(instance: string, table: string, deletes: readonly RowDelete[]): Promise<void>;

  /**
   * Drops what the store caches of an instance (its tables' layouts, its schema table), or of one
   * of its tables, so that the next request reads them again from the store (the admin task
   * /tasks/close, KijiREST's close task). Requests already running keep what they hold.
   */
  forget(instance: string, table?: string): void;

  /**
   * Split points for exports: at most `parts` contiguous row-key ranges, in key order, covering
   * every row key (the first starts open, the last ends open), balanced by estimated size.
   */
  splits(instance: string, table: string, parts: number): Promise<KeySplit[]>;

  /** Scans started and not yet finished or returned (for tests and the metrics endpoint). */
  readonly openScans: number;
  /** Largest row key the store accepts, in bytes. */
  readonly maxRowKeyBytes: number;
  close(): Promise<void>;
}
