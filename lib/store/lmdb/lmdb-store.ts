/**
 * The embedded store: one LMDB environment per data directory. A `meta` database holds
 * instances, table layouts and schema tables; each table has its own database of cells
 * (cell-key.ts, ../cell-value.ts). Reads use LMDB's synchronous API (about 10x faster than awaited
 * reads, docs/architecture.md, "The embedded store"); writes run in one synchronous write transaction per batch, which
 * LMDB serializes across processes, so several gateway processes can share a directory.
 */
import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { rgError } from '../../errors.js';
import { parseLayout } from '../../model/layout/layout.js';
import { END_OF_TIME } from '../../model/read/read-request.js';
import { FOREVER, type CellOut, type ReadSpec, type RowOut, type RowWrite, type SchemaTable, type TableLayout } from '../../model/types.js';
import { CellPicker } from '../cell-picker.js';
import { checkInstanceName, isStoreName } from '../store-names.js';
import { TableCache } from '../table-cache.js';
import {
  DATA_VERSION,
  type BatchMarker,
  type ChunkScan,
  type InstanceMetadata,
  type RenderedChunk,
  type RowDelete,
  type ChunkSpec,
  type FramedRenderSpec,
  type PackedRows,
  type RowScan,
  type ScanRequest,
  type Store,
} from '../store.js';
import { ArrowChunkEncoder } from './arrow-chunk.js';
import { AvroChunkEncoder } from './avro-chunk.js';
import { ChunkRenderer, renderChunk } from './chunk-render.js';
import { RowCollector } from './row-collector.js';
import { checkDataDirectory } from './data-dir-check.js';
import { lmdbEnvOptions } from './env-options.js';
import { splitRange } from './range-split.js';
import { tableSplits } from './table-splits.js';
import { checkDeletedFamily, checkWrittenFamily } from '../family-checks.js';
import type { KeySplit } from '../key-splits.js';
import { prefixEnd, scanRange } from '../key-range.js';
import { defaultScanThreads, PARALLEL_MIN_BYTES, ScanPool } from './scan-pool.js';
import { cellKeyFits, LMDB_MAX_KEY, parseCellTail, rowKeyEnd, rowPrefix } from './cell-key.js';
import { decodeCell } from '../cell-value.js';
import { decodeCompactRow, FORMAT_VERSION, isCompact } from './compact-row.js';
import { installSchemaTable, LmdbSchemaTable } from './lmdb-schema-table.js';
import { RowWriter, type WritableTable } from './row-writer.js';
import { cursorBatches, ScanCursor, type AbandonableScan, type Entry } from './scan-cursor.js';
import { asyncTransaction, guardedWrite, ignoreOrphanedCommitFailures, quietLmdbCommitErrors } from './write-failures.js';
import { mergedRows, preparedRows } from './prepared-batch.js';
/** Rows per batch handed to a scan's consumer: big enough to amortize one promise per batch. */
const SCAN_BATCH_ROWS = 256;
/** Rendered bytes per fast-path chunk: large socket writes, still small against a slow client. */
const CHUNK_BYTES = 256 * 1024;
/**
 * Rendered bytes per chunk of the scan threads: each chunk is one message between threads
 * (postMessage was 6-7% of a scan thread's time at 256 KiB chunks); what a scan holds ahead is
 * whole parts either way (scan-pool.ts), so larger chunks hold no more.
 */
const PARALLEL_CHUNK_BYTES = 1024 * 1024;
/** Stored bytes per part of a parallel scan: ~2 MB keeps the parts held ahead at a few MB. */
const PART_BYTES = 2 * 1024 * 1024;
const MAX_PARTS = 4096;
/**
 * A table's meta record. `rows: 'compact'`: every row has a row entry (compact-row.ts), so an
 * absent row entry is an absent row. Tables written before compact rows lack it and may hold
 * legacy rows (cell entries only) until upgraded (upgradeTable). `format`: the compact row format
 * every row entry is in; tables without it may hold rows of format 1 (read, and rewritten by
 * upgradeTable).
 */
interface TableRecord {
  readonly layout: Record<string, unknown>;
  readonly created: number;
  readonly rows?: typeof COMPACT_ONLY;
  readonly format?: number;
}
const COMPACT_ONLY = 'compact';
/** Rows converted per write transaction of an upgrade: ~10-50 ms each, so concurrent writers wait little. */
const UPGRADE_BATCH_ROWS = 1000;

interface OpenTable extends WritableTable {
  readonly dbName: string;
  readonly writer: RowWriter;
  /** Some family has a TTL: what a read returns depends on the clock. */
  readonly hasTtl: boolean;
  /** Point-get renderers by read and render spec (tables without TTL only). */
  readonly renderers: Map<string, ChunkRenderer>;
  /**
   * The renderer the last point get used, with the spec objects it was found for: requests of
   * the default read reuse the same frozen spec objects, so the next one finds it by identity
   * without building and hashing its Map key (~80 ns a point get).
   */
  lastPoint: { readonly read: ReadSpec; readonly render: FramedRenderSpec; readonly renderer: ChunkRenderer } | undefined;
}

export interface LmdbStoreOptions {
  readonly path: string;
  /**
   * Threads that render one large scan (limit -1, no wildcard) in parallel, in row order; 0 or 1 =
   * the calling thread only. Default: the machine's cores, at most 4.
   */
  readonly scanThreads?: number;
  /** Thresholds of parallel scans, for tests (defaults PARALLEL_MIN_BYTES, PART_BYTES). */
  readonly parallelScan?: { readonly minBytes?: number; readonly partBytes?: number };
  /** Skip fsync on commit (tests and benchmarks only: a machine crash may lose recent writes). */
  readonly noSync?: boolean;
}

export class LmdbStore implements Store {
  readonly kind = 'lmdb' as const;
  /** Rows are packed as compact rows sorted by key (prepared-batch.ts, plain-line.ts: lib/store/row-packer.ts). */
  readonly packing = 'lmdb' as const;
  /**
   * Row keys up to 1024 bytes, not LMDB's 1978-byte key limit: a cell key is the escaped row key,
   * its family, the escaped qualifier and an 8-byte timestamp (cell-key.ts), so a row key of at
   * most 1024 bytes leaves at least ~940 bytes for family and qualifier. A write whose cell key
   * would still exceed LMDB's limit (a huge qualifier, many 00 bytes escaped) is refused whole.
   */
  readonly maxRowKeyBytes = 1024;
  private readonly env: RootDatabase;
  private readonly path: string;
  private readonly meta: Database;
  private readonly tables = new TableCache<OpenTable>();
  private readonly schemaTables = new Map<string, LmdbSchemaTable>();
  /** Scans not finished yet: close() ends them, and so closes their LMDB cursors, before it closes the environment. */
  private readonly scans = new Set<AbandonableScan>();
  private closed = false;
  private readonly pool: ScanPool | undefined;
  /** Thresholds of parallel scans; tunable at run time (tests vary the part size on one pool). */
  readonly parallelScan: { minBytes: number; partBytes: number };

  constructor(options: LmdbStoreOptions) {
    mkdirSync(options.path, { recursive: true });
    ignoreOrphanedCommitFailures();
    quietLmdbCommitErrors();
    this.path = options.path;
    checkDataDirectory(options.path);
    this.env = open(lmdbEnvOptions(options.path, options.noSync ?? false));
    const threads = options.scanThreads ?? defaultScanThreads();
    this.pool = threads >= 2 ? new ScanPool(options.path, threads) : undefined;
    this.parallelScan = { minBytes: options.parallelScan?.minBytes ?? PARALLEL_MIN_BYTES, partBytes: options.parallelScan?.partBytes ?? PART_BYTES };
    this.meta = this.env.openDB({ name: 'meta', encoding: 'json' });
  }

  get openScans(): number {
    return this.scans.size;
  }

  /** The threads that render large scans (undefined with scanThreads 0 or 1); for metrics and tests. */
  get scanPool(): ScanPool | undefined {
    return this.pool;
  }

  // ------------------------------------------------------------ instances and tables

  async createInstance(name: string): Promise<void> {
    checkInstanceName(name);
    // A synchronous transaction is durable once it returns (commits sync, env-options.ts). Awaiting
    // lmdb-js's `flushed` after it reported an earlier failed asynchronous commit as this one's
    // failure: a DELETE that committed on a full disk answered 507.
    const created = await guardedWrite(this.path, `creating instance ${name}`, () =>
      this.meta.transactionSync(() => {
        if (this.meta.get(['instance', name]) !== undefined) return false;
        this.meta.put(['instance', name], { dataVersion: DATA_VERSION, created: Date.now() });
        installSchemaTable(this.meta, name);
        return true;
      }),
    );
    if (!created) throw rgError('RG_ERR_INSTANCE_EXISTS', `instance ${name} already exists`);
  }

  async listInstances(): Promise<string[]> {
    return this.listKeys(['instance']);
  }

  async instanceMetadata(instance: string): Promise<InstanceMetadata> {
    const info = this.requireInstance(instance);
    const schemaTable = await this.schemaTableOf(instance).entries();
    const tables = this.listKeys(['table', instance]).map((name) => ({ name, layout: this.openTable(instance, name).layout.desc }));
    return { name: instance, dataVersion: info.dataVersion, schemaTable, tables };
  }

  async schemaTable(instance: string): Promise<SchemaTable> {
    this.requireInstance(instance);
    return this.schemaTableOf(instance);
  }

  async createTable(instance: string, layout: TableLayout): Promise<void> {
    this.requireInstance(instance);
    const created = await guardedWrite(this.path, `creating table ${layout.name}`, () =>
      this.meta.transactionSync(() => {
        if (this.meta.get(['table', instance, layout.name]) !== undefined) return false;
        this.meta.put(['table', instance, layout.name], {
          layout: layout.desc,
          created: Date.now(),
          rows: COMPACT_ONLY,
          format: FORMAT_VERSION,
        } satisfies TableRecord);
        return true;
      }),
    );
    if (!created) throw rgError('RG_ERR_TABLE_EXISTS', `table ${layout.name} already exists in instance ${instance}`);
  }

  async listTables(instance: string): Promise<string[]> {
    this.requireInstance(instance);
    return this.listKeys(['table', instance]);
  }

  async getLayout(instance: string, table: string): Promise<TableLayout> {
    return this.layoutNow(instance, table);
  }

  layoutNow(instance: string, table: string): TableLayout {
    return this.openTable(instance, table).layout;
  }

  // ------------------------------------------------------------ reads

  /**
   * A key longer than any write accepts (over maxRowKeyBytes, or whose escaped prefix alone passes
   * LMDB's key limit) is a missing row, read without touching LMDB (whose cursor cannot even seek
   * to it): no such row can exist, so "no cells" is the true answer, as for any other absent key,
   * and one such key does not fail a bulk get of others. Layers that tell a user their key is
   * unusable check maxRowKeyBytes themselves first (HTTP's storableKey, the CLI's --eid).
   */
  async get(instance: string, table: string, rowKeys: readonly Buffer[], read: ReadSpec): Promise<RowOut[]> {
    const t = this.openTable(instance, table);
    const picker = new CellPicker(t.layout, read);
    return rowKeys.map((rowKey) => {
      const cells: CellOut[] = [];
      const prefix = this.storablePrefix(rowKey);
      if (prefix === undefined) return { rowKey, cells };
      picker.beginRow();
      const entry = t.db.get(prefix);
      if (entry !== undefined && isCompact(entry)) {
        for (const cell of decodeCompactRow(entry).cells()) if (picker.keep(cell.family, cell.qualifier, cell.timestamp)) cells.push(cell);
      } else if (entry !== undefined || !t.compactOnly) {
        for (const { key, value } of this.cellEntries(t, prefix)) {
          const tail = parseCellTail(key, prefix.length);
          if (picker.keep(tail.family, tail.qualifier, tail.timestamp)) cells.push(decodeCell(tail.family, tail.qualifier, tail.timestamp, value));
        }
      }
      return { rowKey, cells };
    });
  }

  /**
   * Point gets rendered straight into response bytes (the fast path of get(), byte-identical to
   * serializing its rows with lib/rows/row-format.ts): a compact row is one LMDB read and mostly
   * one copy of its stored text. Every key asked for is answered, a missing row with empty cells.
   */
  getChunk(instance: string, table: string, rowKeys: readonly Buffer[], read: ReadSpec, render: FramedRenderSpec): RenderedChunk {
    const t = this.openTable(instance, table);
    const renderer = this.pointRenderer(t, read, render);
    renderer.reset();
    for (const rowKey of rowKeys) {
      const prefix = this.storablePrefix(rowKey);
      // getBinaryFast: a view of lmdb-js's read buffer, valid until the next read; rendered at once.
      const entry = prefix === undefined ? undefined : t.db.getBinaryFast(prefix);
      if (entry !== undefined && isCompact(entry)) {
        renderer.compactRow(rowKey, entry, true);
      } else if (prefix !== undefined && (entry !== undefined || !t.compactOnly)) {
        renderer.beginRow(rowKey);
        for (const { key, value } of this.cellEntries(t, prefix)) renderer.cell(key, prefix.length, value, value.length);
        renderer.endRow(true);
      } else {
        renderer.missingRow(rowKey);
      }
    }
    return renderer.takeChunk(false) ?? { bytes: Buffer.alloc(0), rows: 0, cells: 0 };
  }

  /**
   * A renderer for point gets: built once per table, read and render spec where no family has a
   * TTL (the answer does not depend on the clock then), since building one (CellPicker, column
   * plans, output buffer) took ~4 us, a fifth of a point get's own work; a new one per request
   * where a TTL makes `now` matter.
   */
  private pointRenderer(t: OpenTable, read: ReadSpec, render: FramedRenderSpec): ChunkRenderer {
    if (t.hasTtl) return new ChunkRenderer(t.layout, read, render, Date.now(), 4096);
    const last = t.lastPoint;
    if (last !== undefined && last.read === read && last.render === render) return last.renderer;
    // The usual read (every column, any time) has short keys: the full key took ~0.4 us to build
    // and hash, a third of a point get's store work (numbers made text, columns stringified).
    const everything = read.columns === undefined && read.minTimestamp === 0 && read.maxTimestamp === END_OF_TIME;
    const key = everything
      ? `${render.entityIdForm}${render.withSchema ? 1 : 0}${render.terminator.length}${read.maxVersions}`
      : `${render.entityIdForm} ${render.withSchema} ${render.terminator.length} ${read.maxVersions} ${read.minTimestamp} ${read.maxTimestamp} ${read.columns === undefined ? '*' : JSON.stringify(read.columns)}`;
    let renderer = t.renderers.get(key);
    if (renderer === undefined) {
      // Bounded: a client cycling through many column selections must not grow it without end.
      if (t.renderers.size >= 64) t.renderers.clear();
      renderer = new ChunkRenderer(t.layout, read, render, Date.now(), 4096);
      t.renderers.set(key, renderer);
    }
    t.lastPoint = { read, render, renderer };
    return renderer;
  }

  /** `rowPrefix(rowKey)`, or undefined for a key no write can have stored. */
  private storablePrefix(rowKey: Buffer): Buffer | undefined {
    if (rowKey.length > this.maxRowKeyBytes) return undefined;
    const prefix = rowPrefix(rowKey);
    return prefix.length > LMDB_MAX_KEY ? undefined : prefix;
  }

  /** The cell entries of a spilled or legacy row (not its marker). */
  private *cellEntries(t: OpenTable, prefix: Buffer): Generator<Entry> {
    for (const entry of t.db.getRange({ start: prefix, end: prefixEnd(prefix) })) if (entry.key.length > prefix.length) yield entry;
  }

  scan(instance: string, table: string, request: ScanRequest): RowScan {
    const t = this.openTable(instance, table);
    const cursor = this.openCursor(t, request);
    let batch: RowOut[] = [];
    // Rows with no selected cell are not returned and do not count against the limit.
    const visitor = new RowCollector(t.layout, request.read, (row) => batch.push(row));
    return cursorBatches(cursor, () => {
      batch = [];
      while (batch.length < SCAN_BATCH_ROWS && cursor.remaining > 0) {
        const kept = cursor.nextRow(visitor);
        if (kept === undefined) {
          cursor.remaining = 0;
          break;
        }
        if (kept) cursor.remaining--;
      }
      return batch.length > 0 ? batch : undefined;
    });
  }

  scanChunks(instance: string, table: string, request: ScanRequest, render: ChunkSpec): ChunkScan {
    const t = this.openTable(instance, table);
    const parallel = this.parallelScanChunks(t, request, render);
    if (parallel !== undefined) return parallel;
    const renderer =
      'avro' in render
        ? new AvroChunkEncoder(t.layout, request.read, render.avro)
        : 'arrow' in render
          ? new ArrowChunkEncoder(t.layout, request.read, render.arrow)
          : new ChunkRenderer(t.layout, request.read, render);
    const cursor = this.openCursor(t, request);
    return cursorBatches(cursor, () => renderChunk(cursor, renderer, CHUNK_BYTES));
  }

  /**
   * A whole-range export (limit -1, no row filter) of a table big enough to be worth it, rendered
   * by the scan pool's threads; undefined when the scan should run on this thread.
   */
  private parallelScanChunks(t: OpenTable, request: ScanRequest, render: ChunkSpec): ChunkScan | undefined {
    if (this.pool === undefined || this.pool.failure !== undefined || request.limit >= 0 || request.filter !== undefined) return undefined;
    // A row cap is the whole scan's, not a part's.
    if ('arrow' in render && render.arrow.rows >= 0) return undefined;
    const stats = t.db.getStats() as { pageSize: number; treeLeafPageCount: number; overflowPages: number };
    const storedBytes = (stats.treeLeafPageCount + stats.overflowPages) * stats.pageSize;
    if (storedBytes < this.parallelScan.minBytes) return undefined;
    const { start, end } = scanBounds(request);
    const parts = Math.min(MAX_PARTS, Math.max(this.pool.threads * 4, Math.ceil(storedBytes / this.parallelScan.partBytes)));
    const ranges = splitRange(t.db, start, end, parts);
    if (ranges.length < 2) return undefined;
    const scan = this.pool.scan({
      dbName: t.dbName,
      layoutJson: JSON.stringify(t.layout.desc),
      read: request.read,
      render,
      now: Date.now(),
      ranges,
      chunkBytes: PARALLEL_CHUNK_BYTES,
      onFinish: () => this.scans.delete(scan),
    });
    this.scans.add(scan);
    return scan;
  }

  /** A cursor over the scan's key range, counted in openScans until it finishes. */
  private openCursor(t: OpenTable, request: ScanRequest): ScanCursor {
    const { start, end } = scanBounds(request);
    const entries = t.db.getRange({ start, end })[Symbol.iterator]();
    const cursor = new ScanCursor(entries, request.limit, request.filter, () => this.scans.delete(cursor));
    this.scans.add(cursor);
    return cursor;
  }

  async splits(instance: string, table: string, parts: number): Promise<KeySplit[]> {
    return tableSplits(this.openTable(instance, table).db, parts);
  }

  // ------------------------------------------------------------ writes

  /**
   * Writes rows (row-writer.ts: a compact row is decoded, changed and encoded again; a spilled row
   * gets cell entries), all in one transaction: the whole batch commits or nothing does.
   */
  async write(instance: string, table: string, rows: readonly RowWrite[]): Promise<void> {
    const t = this.openTable(instance, table);
    let increments = false;
    let bytes = 0;
    for (const row of rows) {
      this.checkRow(t, row);
      bytes += row.rowKey.length;
      for (const cell of row.cells) {
        if (cell.kind === 'counter-increment') increments = true;
        bytes += cell.qualifier.length + (cell.kind === 'value' ? cell.json.length : 8);
      }
    }
    const apply = (): void => {
      for (const row of rows) t.writer.write(row, Date.now());
    };
    // An asynchronous transaction, which lmdb-js commits together with concurrent ones (several
    // POSTs share one commit and one fsync), off the main thread. It resolves once the commit is on
    // disk: commits sync inside the transaction (env-options.ts). An increment can still fail inside
    // it (overflow): then it runs abortable, rolled back whole when the failure is thrown.
    await guardedWrite(this.path, 'writing rows', () => asyncTransaction(t.db, apply, increments), bytes);
  }

  /**
   * Writes rows handed over a slice at a time, all in one transaction, as write() would write
   * them: a large POST's rows then never all exist at once, as objects or encoded (its packed rows
   * are turned into objects a slice at a time inside the transaction). A row the store refuses (a
   * key over its limits, an unknown family) or an increment that overflows rolls the whole batch
   * back.
   */
  async writeSlices(instance: string, table: string, slices: Iterable<readonly RowWrite[]>): Promise<void> {
    const t = this.openTable(instance, table);
    const apply = (): void => {
      for (const slice of slices) {
        for (const row of slice) {
          this.checkRow(t, row);
          t.writer.write(row, Date.now());
        }
      }
    };
    // Tried and not kept: a new row of a one-row POST put by lmdb-js's conditional write on its
    // write thread (ifNoExists, or put with noOverwrite), no JavaScript callback inside the
    // transaction: 1-client p50 0.63 ms against 0.74-0.78 (hand-off to settle 370 us against
    // 470 us), but after such a write's commit failed on a full disk the process's heap was corrupt
    // (glibc "corrupted size vs. prev_size" at close; lmdb-js 3.5.6, test/cli/full-disk.test.ts),
    // which transactions like this one do not do.
    await guardedWrite(this.path, 'writing rows', () => asyncTransaction(t.db, apply, true));
  }

  /**
   * Store.writePacked: the parts of one import batch in one transaction, as write() would write
   * their rows one after another: parts packed by BatchPacker (sorted runs) and parts of rows the packed format does
   * not carry (RowWrite, counter increments). When every part is packed, their rows are merged into
   * one key order (mergedRows: a row's lines keep their input order) and appended at the table's
   * end while its keys stay above the table's (an import into an empty table), else written as
   * any other row. Otherwise the parts are written in order, and an increment that
   * overflows or a row the store refuses rolls the whole batch back.
   */
  async writePacked(instance: string, table: string, parts: readonly (PackedRows | readonly RowWrite[])[], marker?: BatchMarker): Promise<void> {
    const t = this.openTable(instance, table);
    const runs = parts.filter((p): p is PackedRows => !Array.isArray(p));
    if (runs.length === parts.length) {
      let stale = false;
      const apply = (): void => {
        // A marker found moved: nothing is written (no child transaction to roll back: one cost
        // a 1,000,000-row batch 10-20%, 11.5-12.4 s against 10.3-10.4 s).
        if (marker !== undefined && !this.moveMarker(marker)) {
          stale = true;
          return;
        }
        let appending = true;
        let previous: Buffer | undefined;
        for (const { prefix, encoded } of mergedRows(runs)) {
          if (appending) {
            const appended = t.writer.appendEncoded(prefix, encoded);
            if (appended === 'appended') {
              previous = prefix;
              continue;
            }
            // A key below the table's last one ends appending for this write: every later put
            // would first be refused. A second line of the row just appended does not.
            if (appended === 'below' && (previous === undefined || !previous.equals(prefix))) appending = false;
          }
          t.writer.writeEncoded(prefix, encoded, Date.now());
          previous = prefix;
        }
      };
      // Nothing in apply throws (the rows were validated and encoded whole): an asynchronous
      // transaction, as write() uses without increments.
      const bytes = runs.reduce((n, run) => n + run.bytes.length, 0);
      await guardedWrite(this.path, 'writing rows', () => asyncTransaction(t.db, apply), bytes);
      if (stale) throw staleMarker();
      return;
    }
    for (const part of parts) if (Array.isArray(part)) for (const row of part as readonly RowWrite[]) this.checkRow(t, row);
    const apply = (): void => {
      if (marker !== undefined && !this.moveMarker(marker)) throw staleMarker();
      for (const part of parts) {
        if (Array.isArray(part)) for (const row of part as readonly RowWrite[]) t.writer.write(row, Date.now());
        else for (const { prefix, encoded } of preparedRows(part as PackedRows)) t.writer.writeEncoded(prefix, encoded, Date.now());
      }
    };
    await guardedWrite(this.path, 'writing rows', () => asyncTransaction(t.db, apply, true));
  }

  /** A marker is a meta record put in the batch's transaction (LMDB's transactions span the environment). */
  async batchMarker(key: string): Promise<string | undefined> {
    return this.meta.get(markerKey(key)) as string | undefined;
  }

  async clearBatchMarker(key: string): Promise<void> {
    await guardedWrite(this.path, 'removing an import marker', () => this.meta.transactionSync(() => this.meta.removeSync(markerKey(key))));
  }

  /** Inside a batch's transaction: the marker moved from the value expected to the batch's; false, nothing written, when it holds another. */
  private moveMarker(marker: BatchMarker): boolean {
    const stored = this.meta.get(markerKey(marker.key)) as string | undefined;
    if (stored !== marker.expected) return false;
    this.meta.putSync(markerKey(marker.key), marker.value);
    return true;
  }

  async delete(instance: string, table: string, deletes: readonly RowDelete[]): Promise<void> {
    const t = this.openTable(instance, table);
    for (const d of deletes) checkDeletedFamily(t.layout, d);
    await guardedWrite(this.path, 'deleting', () =>
      t.db.transactionSync(() => {
        for (const d of deletes) if (this.storablePrefix(d.rowKey) !== undefined) t.writer.delete(d);
      }),
    );
  }

  // ------------------------------------------------------------ upgrade of data written before compact rows

  /** Tables that may still hold rows an earlier release wrote: legacy rows (cell entries only), or compact rows of format 1. */
  legacyTables(): { instance: string; table: string }[] {
    const out: { instance: string; table: string }[] = [];
    for (const instance of this.listKeys(['instance'])) {
      for (const table of this.listKeys(['table', instance])) {
        const record = this.meta.get(['table', instance, table]) as TableRecord | undefined;
        if (record !== undefined && (record.rows !== COMPACT_ONLY || record.format !== FORMAT_VERSION)) out.push({ instance, table });
      }
    }
    return out;
  }

  /**
   * Turns every legacy row of the table compact (or spilled, when too large) and rewrites every
   * compact row of an earlier format in the current one, UPGRADE_BATCH_ROWS rows per transaction,
   * then marks the table compact-only in the current format. Idempotent, and safe beside other
   * writers: each row is converted inside a write transaction that first checks it still is legacy.
   * `onProgress` is told the rows walked so far after each batch.
   */
  async upgradeTable(instance: string, table: string, onProgress: (rows: number) => void = () => undefined): Promise<{ rows: number; converted: number }> {
    const t = this.openTable(instance, table);
    let rows = 0;
    let converted = 0;
    let start: Buffer | undefined;
    for (;;) {
      const batch: Buffer[] = [];
      for (const key of t.db.getKeys({ start }) as Iterable<Buffer>) {
        const prefix = key.subarray(0, rowKeyEnd(key));
        if (batch.length > 0 && batch[batch.length - 1]!.equals(prefix)) continue;
        if (batch.length === UPGRADE_BATCH_ROWS) break;
        batch.push(Buffer.from(prefix));
      }
      if (batch.length === 0) break;
      converted += await guardedWrite(this.path, `upgrading table ${table}`, () =>
        t.db.transactionSync(() => batch.filter((prefix) => t.writer.upgrade(prefix) || t.writer.upgradeFormat(prefix)).length),
      );
      rows += batch.length;
      onProgress(rows);
      start = prefixEnd(batch[batch.length - 1]!);
      if (start === undefined) break;
    }
    await guardedWrite(this.path, `upgrading table ${table}`, () =>
      this.meta.transactionSync(() => {
        const record = this.meta.get(['table', instance, table]) as TableRecord;
        this.meta.put(['table', instance, table], { ...record, rows: COMPACT_ONLY, format: FORMAT_VERSION } satisfies TableRecord);
      }),
    );
    this.forget(instance, table);
    return { rows, converted };
  }

  /**
   * Ends the scans still open (a reader coming back gets RG_ERR_STORE_UNAVAILABLE, and nothing
   * touches their cursors after the environment closes), then the scan threads and the environment.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const stopped = rgError('RG_ERR_STORE_UNAVAILABLE', 'the store was closed while this scan ran (the gateway is stopping); retry the request');
    for (const scan of [...this.scans]) scan.abandon(stopped);
    await this.pool?.close();
    await this.env.close();
  }

  // ------------------------------------------------------------ helpers

  /** What the store refuses of a row whatever its cells' values: an unknown family, a key over its limits. */
  private checkRow(t: OpenTable, row: RowWrite): void {
    this.checkKeySizes(row);
    for (const cell of row.cells) checkWrittenFamily(t.layout, cell);
  }

  private checkKeySizes(row: RowWrite): void {
    if (row.rowKey.length > this.maxRowKeyBytes) {
      throw rgError('RG_ERR_ROW_KEY_TOO_LONG', `row key of ${row.rowKey.length} bytes exceeds the embedded store's limit of ${this.maxRowKeyBytes} bytes`);
    }
    for (const cell of row.cells) {
      if (!cellKeyFits(row.rowKey, cell.family, cell.qualifier)) {
        throw rgError(
          'RG_ERR_ROW_KEY_TOO_LONG',
          `row key plus column ${cell.family}:${cell.qualifier.slice(0, 64)} exceed the embedded store's key limit of ${LMDB_MAX_KEY} bytes`,
        );
      }
    }
  }

  private requireInstance(instance: string): { dataVersion: string } {
    const info = isStoreName(instance) ? (this.meta.get(['instance', instance]) as { dataVersion: string } | undefined) : undefined;
    if (!info) throw rgError('RG_ERR_INSTANCE_NOT_FOUND', `instance ${instance} not found`);
    return info;
  }

  private schemaTableOf(instance: string): LmdbSchemaTable {
    let s = this.schemaTables.get(instance);
    if (!s) {
      s = new LmdbSchemaTable(this.meta, instance, this.path);
      this.schemaTables.set(instance, s);
    }
    return s;
  }

  forget(instance: string, table?: string): void {
    this.tables.forget(instance, table);
    if (table === undefined) this.schemaTables.delete(instance);
  }

  /** The open table, from cache; tables are never dropped, so a cached entry stays valid. */
  private openTable(instance: string, table: string): OpenTable {
    if (this.closed) throw rgError('RG_ERR_STORE_UNAVAILABLE', `the store is closed (the gateway is stopping): table ${table} cannot be read or written`);
    const cached = this.tables.get(instance, table);
    if (cached) return cached;
    this.requireInstance(instance);
    const record = isStoreName(table) ? (this.meta.get(['table', instance, table]) as TableRecord | undefined) : undefined;
    if (!record) throw rgError('RG_ERR_TABLE_NOT_FOUND', `table ${table} not found in instance ${instance}`);
    const dbName = `data/${instance}/${table}`;
    const base = {
      layout: parseLayout(record.layout),
      dbName,
      db: this.env.openDB<Buffer, Buffer>({ name: dbName, keyEncoding: 'binary', encoding: 'binary' }),
      compactOnly: record.rows === COMPACT_ONLY,
    };
    const hasTtl = [...base.layout.families.values()].some((f) => f.ttlSeconds < FOREVER);
    const opened: OpenTable = { ...base, writer: new RowWriter(base), hasTtl, renderers: new Map(), lastPoint: undefined };
    this.tables.set(instance, table, opened);
    return opened;
  }

  /** The last element of every meta key under `prefix` (instance names, table names). */
  private listKeys(prefix: (string | number)[]): string[] {
    const names: string[] = [];
    for (const key of this.meta.getKeys({ start: prefix, end: [...prefix, '\uffff'] })) {
      const k = key as (string | number)[];
      if (k.length === prefix.length + 1) names.push(String(k[prefix.length]));
    }
    return names;
  }
}

/** A batch refused because its marker was not where it expected it. */
function staleMarker(): Error {
  return rgError(
    'RG_ERR_STORE_UNAVAILABLE',
    'the batch before this one was not written (its import record is not where this batch expects it), so this batch is not written either',
  );
}

/** Where a batch marker is kept in the meta database. */
function markerKey(key: string): string[] {
  return ['batch-marker', key];
}

/** The LMDB key range of a scan: its [start, end) row keys (scanRange: narrowed by a wildcard's fixed prefix), escaped. */
function scanBounds(request: ScanRequest): { start?: Buffer; end?: Buffer } {
  const { start: startKey, end: endKey } = scanRange(request);
  // Row keys are escaped in cell keys; escaping keeps byte order, so bounds escape the same way
  // (without the 00 00 terminator, so a bound sorts before every cell of its row).
  return {
    start: startKey ? storableBound(rowPrefix(startKey).subarray(0, -2)) : undefined,
    end: endKey ? storableBound(rowPrefix(endKey).subarray(0, -2)) : undefined,
  };
}

/**
 * An escaped bound cut to LMDB's key limit, selecting exactly the same cells: lmdb-js cannot seek
 * to a longer key (it throws "Key of size N was too large"), and no stored key is longer. For a
 * stored cell key c (|c| <= L = LMDB_MAX_KEY) and a bound b with |b| > L, c and b first differ
 * within c or c is a prefix of b, so c < b exactly when c <= b[0, L), and c >= b exactly when
 * c > b[0, L). c never equals b[0, L): every cell key holds the 00 00 row terminator, and an
 * escaped row key never has two 00 bytes in a row (00 is written 00 FF). So b[0, L) as inclusive
 * start or exclusive end keeps [start, end) exact in row-key byte order.
 */
function storableBound(escaped: Buffer): Buffer {
  return escaped.length > LMDB_MAX_KEY ? escaped.subarray(0, LMDB_MAX_KEY) : escaped;
}
