/**
 * The embedded store: one LMDB environment per data directory. A `meta` database holds
 * instances, table layouts and schema tables; each table has its own database of cells
 * (cell-key.ts, cell-value.ts). Reads use LMDB's synchronous API (about 10x faster than awaited
 * reads, platform-notes.md 3); writes run in one synchronous write transaction per batch, which
 * LMDB serializes across processes, so several gateway processes can share a directory.
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { open, type Database, type RootDatabase } from 'lmdb';
import { rgError } from '../../errors.js';
import { parseLayout } from '../../model/layout.js';
import { MAX_NAME_CHARS } from '../../model/layout-names.js';
import { FOREVER, type CellOut, type EncodedCell, type ReadSpec, type RowOut, type RowWrite, type SchemaTable, type TableLayout } from '../../model/types.js';
import { CellPicker, expiryOf } from '../cell-picker.js';
import { DATA_VERSION, isStoreName, type ChunkScan, type InstanceMetadata, type RenderedChunk, type RowDelete, type RowRenderSpec, type RowScan, type ScanRequest, type Store } from '../store.js';
import { ChunkRenderer, renderChunk } from './chunk-render.js';
import { lmdbEnvOptions } from './env-options.js';
import { splitRange } from './range-split.js';
import { ScanPool } from './scan-pool.js';
import { cellKey, CellKeyScratch, cellKeyLength, columnPrefix, familyPrefix, parseCellTail, prefixEnd, readInvertedTimestamp, rowPrefix, writeInvertedTimestamp } from './cell-key.js';
import { counterValue, decodeCell, encodeCounterCell, ValueCellScratch } from './cell-value.js';
import { installSchemaTable, LmdbSchemaTable } from './lmdb-schema-table.js';
import { cursorBatches, ScanCursor, type Entry } from './scan-cursor.js';
import { asyncTransaction, guardedWrite, ignoreOrphanedCommitFailures, quietLmdbCommitErrors } from './write-failures.js';
import { FLAG_SERVER_TIME, LMDB_MAX_KEY, TRIM_ALWAYS, TRIM_IF_ROW_EXISTS, trimMode, type PreparedBatch } from './prepared-batch.js';
/** Rows per batch handed to a scan's consumer: big enough to amortize one promise per batch. */
const SCAN_BATCH_ROWS = 256;
/** Rendered bytes per fast-path chunk: large socket writes, still small against a slow client. */
const CHUNK_BYTES = 256 * 1024;
/** Default scan threads at most: two cores already reach the export target; more mostly queue. */
const MAX_DEFAULT_SCAN_THREADS = 4;
/** Tables smaller than this are scanned on the calling thread: ~8 MB stored renders in ~30 ms. */
const PARALLEL_MIN_BYTES = 8 * 1024 * 1024;
/** Stored bytes per part of a parallel scan: ~2 MB keeps the parts held ahead at a few MB. */
const PART_BYTES = 2 * 1024 * 1024;
const MAX_PARTS = 4096;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

interface OpenTable {
  readonly layout: TableLayout;
  readonly dbName: string;
  readonly db: Database<Buffer, Buffer>;
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
  private readonly tables = new Map<string, OpenTable>();
  private readonly schemaTables = new Map<string, LmdbSchemaTable>();
  private scansOpen = 0;
  private readonly pool: ScanPool | undefined;
  /** Thresholds of parallel scans; tunable at run time (tests vary the part size on one pool). */
  readonly parallelScan: { minBytes: number; partBytes: number };

  constructor(options: LmdbStoreOptions) {
    mkdirSync(options.path, { recursive: true });
    ignoreOrphanedCommitFailures();
    quietLmdbCommitErrors();
    this.path = options.path;
    this.env = open(lmdbEnvOptions(options.path, options.noSync ?? false));
    const threads = options.scanThreads ?? Math.min(availableParallelism(), MAX_DEFAULT_SCAN_THREADS);
    this.pool = threads >= 2 ? new ScanPool(options.path, threads) : undefined;
    this.parallelScan = { minBytes: options.parallelScan?.minBytes ?? PARALLEL_MIN_BYTES, partBytes: options.parallelScan?.partBytes ?? PART_BYTES };
    this.meta = this.env.openDB({ name: 'meta', encoding: 'json' });
  }

  get openScans(): number {
    return this.scansOpen;
  }

  /** The threads that render large scans (undefined with scanThreads 0 or 1); for metrics and tests. */
  get scanPool(): ScanPool | undefined {
    return this.pool;
  }

  // ------------------------------------------------------------ instances and tables

  async createInstance(name: string): Promise<void> {
    if (!isStoreName(name)) throw rgError('RG_ERR_BAD_PARAMETER', `invalid instance name ${JSON.stringify(name)}: use letters, digits and _, at most ${MAX_NAME_CHARS} characters`);
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
        this.meta.put(['table', instance, layout.name], { layout: layout.desc, created: Date.now() });
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
      if (rowKey.length > this.maxRowKeyBytes) return { rowKey, cells: [] };
      const prefix = rowPrefix(rowKey);
      if (prefix.length > LMDB_MAX_KEY) return { rowKey, cells: [] };
      picker.beginRow();
      const cells: CellOut[] = [];
      for (const { key, value } of t.db.getRange({ start: prefix, end: prefixEnd(prefix) })) {
        const tail = parseCellTail(key, prefix.length);
        if (picker.keep(tail.family, tail.qualifier, tail.timestamp)) cells.push(decodeCell(tail.family, tail.qualifier, tail.timestamp, value));
      }
      return { rowKey, cells };
    });
  }

  scan(instance: string, table: string, request: ScanRequest): RowScan {
    const t = this.openTable(instance, table);
    const picker = new CellPicker(t.layout, request.read);
    const cursor = this.openCursor(t, request);
    let rowKey: Buffer = Buffer.alloc(0);
    let cells: CellOut[] = [];
    const beginRow = (key: Buffer): void => {
      rowKey = key;
      cells = [];
      picker.beginRow();
    };
    const cell = (entry: Entry, rowEnd: number): void => {
      const tail = parseCellTail(entry.key, rowEnd);
      if (picker.keep(tail.family, tail.qualifier, tail.timestamp)) cells.push(decodeCell(tail.family, tail.qualifier, tail.timestamp, entry.value));
    };
    return cursorBatches(cursor, () => {
      const batch: RowOut[] = [];
      while (batch.length < SCAN_BATCH_ROWS && cursor.remaining > 0) {
        if (!cursor.nextRow(beginRow, cell)) {
          cursor.remaining = 0;
          break;
        }
        // Rows with no selected cell are not returned and do not count against the limit.
        if (cells.length === 0) continue;
        batch.push({ rowKey, cells });
        cursor.remaining--;
      }
      return batch.length > 0 ? batch : undefined;
    });
  }

  scanChunks(instance: string, table: string, request: ScanRequest, render: RowRenderSpec): ChunkScan {
    const t = this.openTable(instance, table);
    const parallel = this.parallelScanChunks(t, request, render);
    if (parallel !== undefined) return parallel;
    const renderer = new ChunkRenderer(new CellPicker(t.layout, request.read), t.layout.keyFormat, render);
    const cursor = this.openCursor(t, request);
    return cursorBatches(cursor, () => renderChunk(cursor, renderer, CHUNK_BYTES));
  }

  /**
   * A whole-range export (limit -1, no row filter) of a table big enough to be worth it, rendered
   * by the scan pool's threads; undefined when the scan should run on this thread.
   */
  private parallelScanChunks(t: OpenTable, request: ScanRequest, render: RowRenderSpec): ChunkScan | undefined {
    if (this.pool === undefined || this.pool.failure !== undefined || request.limit >= 0 || request.filter !== undefined) return undefined;
    const stats = t.db.getStats() as { pageSize: number; treeLeafPageCount: number; overflowPages: number };
    const storedBytes = (stats.treeLeafPageCount + stats.overflowPages) * stats.pageSize;
    if (storedBytes < this.parallelScan.minBytes) return undefined;
    const { start, end } = scanBounds(request);
    const parts = Math.min(MAX_PARTS, Math.max(this.pool.threads * 4, Math.ceil(storedBytes / this.parallelScan.partBytes)));
    const ranges = splitRange(t.db, start, end, parts);
    if (ranges.length < 2) return undefined;
    this.scansOpen++;
    return this.pool.scan({
      dbName: t.dbName, layoutJson: JSON.stringify(t.layout.desc), read: request.read, render, now: Date.now(), ranges, chunkBytes: CHUNK_BYTES,
      onFinish: () => {
        this.scansOpen--;
      },
    });
  }

  /** A cursor over the scan's key range, counted in openScans until it finishes. */
  private openCursor(t: OpenTable, request: ScanRequest): ScanCursor {
    const { start, end } = scanBounds(request);
    const entries = t.db.getRange({ start, end })[Symbol.iterator]();
    this.scansOpen++;
    return new ScanCursor(entries, request.limit, request.filter, () => {
      this.scansOpen--;
    });
  }

  // ------------------------------------------------------------ writes

  async write(instance: string, table: string, rows: readonly RowWrite[]): Promise<void> {
    const t = this.openTable(instance, table);
    let increments = false;
    for (const row of rows) {
      this.checkKeySizes(row);
      for (const cell of row.cells) {
        if (!t.layout.families.has(cell.family)) throw rgError('RG_ERR_UNKNOWN_COLUMN', `Specified column does not exist: ${cell.family}:${cell.qualifier}`);
        if (cell.kind === 'counter-increment') increments = true;
      }
    }
    // Keys and values are built into reusable buffers: putSync inside the write transaction copies
    // both before it returns.
    const keys = new CellKeyScratch();
    const values = new ValueCellScratch();
    // What each row needs about max_versions and ttl depends on its cells alone: decided before the
    // write lock is taken, as packRows does for prepared batches.
    const modes = rows.map((row) => trimMode(row.cells, t.layout.families));
    const apply = (): void => {
      rows.forEach((row, i) => {
        const now = Date.now();
        const prefix = rowPrefix(row.rowKey);
        const trim = this.mustTrim(t, prefix, modes[i]!);
        keys.setRow(prefix);
        for (const cell of row.cells) {
          if (cell.kind === 'value') {
            t.db.putSync(keys.key(cell.family, cell.qualifier, cell.timestamp ?? now), values.value(cell.schemaId, cell.json));
          } else if (cell.kind === 'counter-set') {
            t.db.putSync(keys.key(cell.family, cell.qualifier, cell.timestamp ?? now), encodeCounterCell(cell.value));
          } else {
            this.incrementCounter(t, row.rowKey, cell.family, cell.qualifier, cell.delta, now);
          }
        }
        if (trim) this.trimVersions(t, prefix, now);
      });
    };
    if (increments) {
      // An increment can still fail inside the transaction (overflow): a synchronous transaction
      // rolls the whole batch back when its callback throws.
      return guardedWrite(this.path, 'writing rows', () => t.db.transactionSync(apply));
    }
    // Nothing below can throw: an asynchronous transaction, which lmdb-js commits together with
    // concurrent ones (several POSTs share one commit and one fsync), off the main thread. It
    // resolves once the commit is on disk: commits sync inside the transaction (env-options.ts).
    await guardedWrite(this.path, 'writing rows', () => asyncTransaction(t.db, apply));
  }

  /**
   * Adds `delta` to the newest counter cell of the column, in the current write transaction. A
   * newest cell that has outlived its locality group's TTL is one no read returns, so the counter
   * is absent and restarts from `delta` (the expired cell is left to the version trim).
   */
  private incrementCounter(t: OpenTable, rowKey: Buffer, family: string, qualifier: string, delta: bigint, now: number): void {
    const prefix = columnPrefix(rowKey, family, qualifier);
    const expiredBefore = expiryOf(t.layout.families.get(family)!.ttlSeconds, now);
    let current = 0n;
    let timestamp = now;
    for (const { key, value } of t.db.getRange({ start: prefix, end: prefixEnd(prefix), limit: 1 })) {
      const stored = readInvertedTimestamp(key, key.length - 8);
      if (stored < expiredBefore) break;
      current = counterValue(value);
      // A counter set in the future stays the newest cell: update it in place.
      timestamp = Math.max(now, stored);
    }
    const next = current + delta;
    if (next > INT64_MAX || next < INT64_MIN) {
      throw rgError('RG_ERR_BAD_COUNTER', `incrementing counter ${family}:${qualifier} by ${delta} overflows a 64-bit integer`);
    }
    t.db.putSync(cellKey(rowKey, family, qualifier, timestamp), encodeCounterCell(next));
  }

  /**
   * Whether a row written with this trim mode (trimMode, prepared-batch.ts) needs trimming now:
   * whether writing its cells may leave a column with more versions than its
   * max_versions, so that the row must be trimmed afterwards (a row that already had cells and is
   * written in a family with a TTL is trimmed too: the trim drops expired cells); called in the write transaction
   * before the row's cells are written. Each cell adds at most one version of its column (a value
   * or counter set puts one key, replacing a cell of the same timestamp; an increment updates or
   * puts one key). So when the row has no cell yet, a column ends with at most as many versions as
   * it has cells here, and nothing can need trimming unless that count exceeds max_versions.
   * Checking that the row is empty (one counting cursor, ~8 us) is cheaper than trimming it (one
   * cursor reading every key, ~11-16 us per 5-cell row; micro-benchmark in a write transaction of
   * a 1,000,000-cell table); the import of new rows spent 18-21% of its time in the trim.
   */
  private mustTrim(t: OpenTable, prefix: Buffer, mode: number): boolean {
    return mode === TRIM_ALWAYS || (mode === TRIM_IF_ROW_EXISTS && this.rowHasCells(t, prefix));
  }

  /** Whether the row has any cell (in the current write transaction, which sees its own writes). */
  private rowHasCells(t: OpenTable, prefix: Buffer): boolean {
    return t.db.getKeysCount({ start: prefix, end: prefixEnd(prefix) }) > 0;
  }

  /**
   * Writes a batch packed by packRows (prepared-batch.ts), atomically, as write() would write its
   * rows: same keys, values, server timestamps and version trimming.
   */
  async writePrepared(instance: string, table: string, batch: PreparedBatch): Promise<void> {
    const t = this.openTable(instance, table);
    const bytes = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength);
    const apply = (): void => {
      let pos = 0;
      for (let r = 0; r < batch.rows; r++) {
        const now = Date.now();
        const prefixLength = bytes.readUInt16LE(pos);
        pos += 2;
        const prefix = bytes.subarray(pos, pos + prefixLength);
        pos += prefixLength;
        const mode = bytes[pos++];
        const cells = bytes.readUInt16LE(pos);
        pos += 2;
        const trim = this.mustTrim(t, prefix, mode);
        for (let c = 0; c < cells; c++) {
          const flags = bytes[pos++]!;
          const keyLength = bytes.readUInt16LE(pos);
          pos += 2;
          const keyEnd = pos + keyLength;
          if (flags & FLAG_SERVER_TIME) writeInvertedTimestamp(bytes, keyEnd - 8, now);
          const key = bytes.subarray(pos, keyEnd);
          const valueLength = bytes.readUInt32LE(keyEnd);
          pos = keyEnd + 4 + valueLength;
          t.db.putSync(key, bytes.subarray(keyEnd + 4, pos));
        }
        if (trim) this.trimVersions(t, prefix, now);
      }
    };
    // Nothing in apply throws (the batch was validated and encoded whole): an asynchronous
    // transaction, as write() uses without increments.
    await guardedWrite(this.path, 'writing rows', () => asyncTransaction(t.db, apply));
  }

  /**
   * Removes from one row every version beyond its locality group's max_versions and every cell
   * older than `now` minus its group's ttl_seconds (cells no read returns any more; LMDB has no
   * compaction that would drop them). One cursor per row rather than per written column:
   * per-column cursors halved import speed (helper measurement, 20,000-row batches).
   */
  private trimVersions(t: OpenTable, prefix: Buffer, now: number): void {
    // Versions of one column are adjacent keys that differ only in their last 8 bytes (the
    // timestamp): columns are told apart by comparing key bytes, and only a new family is decoded.
    let prev: Uint8Array | undefined;
    let seen = 0;
    let max = FOREVER;
    let expiredBefore = -Infinity;
    let family = '';
    const start = prefix.length;
    for (const key of t.db.getKeys({ start: prefix, end: prefixEnd(prefix) }) as Iterable<Uint8Array>) {
      if (prev === undefined || !sameColumn(prev, key, start)) {
        let i = start;
        while (key[i] !== 0) i++;
        const name = Buffer.from(key.buffer, key.byteOffset + start, i - start).toString('latin1');
        if (name !== family) {
          family = name;
          const layout = t.layout.families.get(name);
          max = layout?.maxVersions ?? FOREVER;
          expiredBefore = layout === undefined ? -Infinity : expiryOf(layout.ttlSeconds, now);
        }
        seen = 0;
      }
      prev = key;
      if (++seen > max || (expiredBefore > -Infinity && readInvertedTimestamp(key, key.length - 8) < expiredBefore)) t.db.removeSync(key as Buffer);
    }
  }

  async delete(instance: string, table: string, deletes: readonly RowDelete[]): Promise<void> {
    const t = this.openTable(instance, table);
    for (const d of deletes) {
      if (d.family !== undefined && !t.layout.families.has(d.family)) {
        throw rgError('RG_ERR_BAD_COLUMNS', `unknown family ${d.family} in table ${t.layout.name}`);
      }
    }
    await guardedWrite(this.path, 'deleting', () => t.db.transactionSync(() => this.applyDeletes(t, deletes)));
  }

  private applyDeletes(t: OpenTable, deletes: readonly RowDelete[]): void {
    for (const d of deletes) {
      const prefix =
        d.family === undefined ? rowPrefix(d.rowKey)
        : d.qualifier === undefined ? familyPrefix(d.rowKey, d.family)
        : columnPrefix(d.rowKey, d.family, d.qualifier);
      // No stored key is longer than LMDB's limit, so a longer prefix (a huge qualifier in
      // `cols`) matches nothing; handing it to a cursor would overflow lmdb-js's key buffer.
      if (prefix.length > LMDB_MAX_KEY) continue;
      const rowEnd = rowPrefix(d.rowKey).length;
      for (const key of t.db.getKeys({ start: prefix, end: prefixEnd(prefix) })) {
        if (d.upToTimestamp === undefined || parseCellTail(key, rowEnd).timestamp <= d.upToTimestamp) t.db.removeSync(key);
      }
    }
  }

  async close(): Promise<void> {
    await this.pool?.close();
    await this.env.close();
  }

  // ------------------------------------------------------------ helpers

  private checkKeySizes(row: RowWrite): void {
    if (row.rowKey.length > this.maxRowKeyBytes) {
      throw rgError('RG_ERR_ROW_KEY_TOO_LONG', `row key of ${row.rowKey.length} bytes exceeds the embedded store's limit of ${this.maxRowKeyBytes} bytes`);
    }
    for (const cell of row.cells) {
      if (cellKeyLength(row.rowKey, cell.family, cell.qualifier) > LMDB_MAX_KEY) {
        throw rgError('RG_ERR_ROW_KEY_TOO_LONG', `row key plus column ${cell.family}:${cell.qualifier.slice(0, 64)} exceed the embedded store's key limit of ${LMDB_MAX_KEY} bytes`);
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

  /** The open table, from cache; tables are never dropped, so a cached entry stays valid. */
  private openTable(instance: string, table: string): OpenTable {
    const id = `${instance}/${table}`;
    const cached = this.tables.get(id);
    if (cached) return cached;
    this.requireInstance(instance);
    const record = isStoreName(table) ? (this.meta.get(['table', instance, table]) as { layout: Record<string, unknown> } | undefined) : undefined;
    if (!record) throw rgError('RG_ERR_TABLE_NOT_FOUND', `table ${table} not found in instance ${instance}`);
    const dbName = `data/${id}`;
    const opened: OpenTable = {
      layout: parseLayout(record.layout),
      dbName,
      db: this.env.openDB<Buffer, Buffer>({ name: dbName, keyEncoding: 'binary', encoding: 'binary' }),
    };
    this.tables.set(id, opened);
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

/** True when two cell keys of one row (row part `[0, start)`) name the same column: only their timestamps differ. */
function sameColumn(a: Uint8Array, b: Uint8Array, start: number): boolean {
  if (a.length !== b.length) return false;
  for (let i = a.length - 9; i >= start; i--) if (a[i] !== b[i]) return false;
  return true;
}

/** The LMDB key range of a scan: [start, end) row keys, narrowed by a wildcard's fixed prefix. */
function scanBounds(request: ScanRequest): { start?: Buffer; end?: Buffer } {
  let startKey = request.start;
  let endKey = request.end;
  const prefix = request.filter?.prefix;
  if (prefix && prefix.length > 0) {
    if (!startKey || Buffer.compare(prefix, startKey) > 0) startKey = prefix;
    const pEnd = prefixEnd(prefix);
    if (pEnd && (!endKey || Buffer.compare(pEnd, endKey) < 0)) endKey = pEnd;
  }
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
