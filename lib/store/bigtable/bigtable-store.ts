/**
 * The distributed store on Cloud Bigtable. Every piece of state lives in Bigtable, so any number
 * of gateway processes can serve one cluster:
 *
 * - a meta table `<tablePrefix>.meta` holds instances, table layouts and schema tables
 *   (meta-table.ts, bigtable-schema-table.ts);
 * - each Kiji table is one Bigtable table `<tablePrefix>.<instance>.<table>` (a hash when that
 *   exceeds Bigtable's 50 characters), one column family per Kiji family with a GC rule from its
 *   locality group's max_versions and ttl_seconds;
 * - cells are stored at ms x 1000 microseconds; values as `01 varint(schemaId) json` (../cell-value.ts, as LMDB),
 *   counters as plain 8-byte big-endian integers so ReadModifyWrite increments them.
 *
 * Reads push the row set, a wildcard entity id's row-key regex (model/keys/wildcard.ts), families/columns,
 * version limits and the time range down (read-filter.ts) and still run the CellPicker, since GC
 * is lazy. Scans (bigtable-scan.ts) stream with
 * backpressure and cancel the gRPC call when returned; they read ReadRows responses as wire bytes
 * (read-rows-wire.ts) and hand rows over in batches of up to 256. Writes go through MutateRows with
 * per-entry status; rows are atomic one by one, not as a batch (Bigtable has no multi-row
 * transactions), but counter increments run first, so an overflowing increment rejects the
 * batch before anything else is written.
 */
import { createHash } from 'node:crypto';
import { rgError, type RowgateError } from '../../errors.js';
import { INT64_MAX, INT64_MIN, isInt64 } from '../../model/cells/int64.js';
import { parseLayout } from '../../model/layout/layout.js';
import { FOREVER, type EncodedCell, type ReadSpec, type RowOut, type RowWrite, type SchemaTable, type TableLayout } from '../../model/types.js';
import { CellPicker, expiryOf } from '../cell-picker.js';
import { counterOverflow } from '../counter-rules.js';
import { checkDeletedFamily, checkWrittenFamily } from '../family-checks.js';
import { groupPieces, type KeySplit } from '../key-splits.js';
import { checkInstanceName, isStoreName } from '../store-names.js';
import { TableCache } from '../table-cache.js';
import { encodeValueCell } from '../cell-value.js';
import {
  DATA_VERSION,
  type BatchMarker,
  type InstanceMetadata,
  type PackedRows,
  type RowDelete,
  type RowScan,
  type ScanRequest,
  type Store,
} from '../store.js';
import { BigtableScan, type ScanCounts, type ScanTable } from './bigtable-scan.js';
import { BigtableClient, type BigtableConnection, type MutateEntry, type Mutation } from './bigtable-client.js';
import { grpcCode, mapBigtableError, mutateFailureError, RETRYABLE, type EntryFailure, type EntryStatus } from './bigtable-errors.js';
import { BigtableSchemaTable } from './bigtable-schema-table.js';
import { MetaTable } from './meta-table.js';
import { buildReadFilter, MAX_BIGTABLE_TIMESTAMP, micros } from './read-filter.js';
import { ChunkMerger, CounterColumns, pickRow } from './row-assembler.js';

/** Bigtable's row key limit. */
const MAX_ROW_KEY = 4096;
/** Bigtable's column qualifier limit. */
const MAX_QUALIFIER = 16 * 1024;
const MAX_TABLE_ID = 50;
/** Meta-row cell of a table whose creation has not finished (two-phase creation, createTable). */
const CREATING = 'creating';
/** Keys per ReadRows call of a bulk get. */
const GET_KEYS_PER_CALL = 1000;
/** Rows and mutations per MutateRows call (Bigtable allows 100,000 mutations per call). */
const MUTATE_ROWS_PER_CALL = 500;
const MUTATIONS_PER_CALL = 20_000;
const MUTATE_CONCURRENCY = 4;
const MUTATE_ATTEMPTS = 4;

export interface BigtableStoreOptions extends BigtableConnection {
  /** Prefix of every Bigtable table this store creates (default rowgate). */
  readonly tablePrefix: string;
}

interface OpenTable {
  readonly instance: string;
  readonly layout: TableLayout;
  readonly tableId: string;
  readonly counters: CounterColumns;
}

interface TableRecord {
  readonly layout: Record<string, unknown>;
  readonly bigtable: string;
}

export class BigtableStore implements Store {
  readonly kind = 'bigtable' as const;
  readonly maxRowKeyBytes = MAX_ROW_KEY;
  private readonly client: BigtableClient;
  private readonly meta: MetaTable;
  /** Caches of things that never change once created (tables are never dropped). */
  private readonly tables = new TableCache<OpenTable>();
  private readonly instances = new Set<string>();
  private readonly schemaTables = new Map<string, SchemaTable>();
  private scansOpen = 0;
  private scanRowsReceived = 0;
  /** What scans report: open scans and rows received. */
  private readonly scanCounts: ScanCounts = {
    open: (delta) => {
      this.scansOpen += delta;
    },
    received: (rows) => {
      this.scanRowsReceived += rows;
    },
  };

  private constructor(private readonly options: BigtableStoreOptions) {
    this.client = new BigtableClient(options);
    this.meta = new MetaTable(this.client, `${options.tablePrefix}.meta`);
  }

  /** Connects and creates the meta table when it does not exist yet. */
  static async open(options: BigtableStoreOptions): Promise<BigtableStore> {
    if (!/^[a-zA-Z0-9_][-a-zA-Z0-9_.]*$/.test(options.tablePrefix) || options.tablePrefix.length > 30) {
      throw rgError(
        'RG_ERR_BAD_CONFIG',
        `store.tablePrefix ${JSON.stringify(options.tablePrefix)} must be 1-30 of letters, digits, _ - . (a Bigtable table id prefix)`,
      );
    }
    const store = new BigtableStore(options);
    try {
      await store.client.call({ doing: `opening Bigtable instance ${store.client.instancePath}` }, () => store.meta.ensure());
    } catch (e) {
      await store.client.close().catch(() => undefined);
      throw e;
    }
    return store;
  }

  get openScans(): number {
    return this.scansOpen;
  }

  /** Rows scans have received from Bigtable so far (before the gateway's own row-key and cell checks). */
  get rowsReceived(): number {
    return this.scanRowsReceived;
  }

  // ------------------------------------------------------------ instances and tables

  async createInstance(name: string): Promise<void> {
    checkInstanceName(name);
    const record = JSON.stringify({ dataVersion: DATA_VERSION, created: Date.now() });
    const created = await this.metaCall(`creating instance ${name}`, () => this.meta.createIfAbsent(`instance/${name}`, { info: Buffer.from(record) }));
    if (!created) throw rgError('RG_ERR_INSTANCE_EXISTS', `instance ${name} already exists`);
    this.instances.add(name);
  }

  async listInstances(): Promise<string[]> {
    const rows = await this.metaCall('listing instances', () => this.meta.scanPrefix('instance/'));
    return rows.map((r) => r.key.slice('instance/'.length));
  }

  async instanceMetadata(instance: string): Promise<InstanceMetadata> {
    const info = await this.requireInstance(instance);
    const schemaTable = await this.schemaTableOf(instance).entries();
    const tables = (await this.createdTables(instance)).map((r) => ({ name: r.name, layout: parseRecord(r.cells).layout }));
    return { name: instance, dataVersion: info.dataVersion, schemaTable, tables };
  }

  async schemaTable(instance: string): Promise<SchemaTable> {
    await this.requireInstance(instance);
    return this.schemaTableOf(instance);
  }

  async createTable(instance: string, layout: TableLayout): Promise<void> {
    await this.requireInstance(instance);
    const tableId = bigtableTableId(this.options.tablePrefix, instance, layout.name);
    const record: TableRecord = { layout: layout.desc, bigtable: tableId };
    const metaKey = `table/${instance}/${layout.name}`;
    // Two phases. The meta row is claimed first, marked `creating`: of two gateways creating one
    // table, exactly one proceeds, and until the mark is removed (the Bigtable table and its GC
    // rules exist) every gateway treats the table as not found and caches nothing of it.
    const claimed = await this.metaCall(`creating table ${layout.name}`, () =>
      this.meta.createIfAbsent(metaKey, { layout: Buffer.from(JSON.stringify(record)), [CREATING]: Buffer.from(String(Date.now())) }),
    );
    if (!claimed) {
      const row = await this.metaCall(`reading table ${layout.name}`, () => this.meta.get(metaKey));
      const creating = row?.has(CREATING) ? ' (it is being created, or its creation was interrupted)' : '';
      throw rgError('RG_ERR_TABLE_EXISTS', `table ${layout.name} already exists in instance ${instance}${creating}`);
    }
    // A layout this store cached under the name is stale: the table was removed behind its back.
    this.tables.forget(instance, layout.name);
    const families = familiesOf(layout);
    try {
      await this.client.createTable(tableId, families);
      // On the emulator GC runs only after a ModifyColumnFamilies call; on Bigtable this is a no-op change.
      const limited = Object.fromEntries(Object.entries(families).filter(([, f]) => Object.keys(f.gcRule).length > 0));
      await this.client.updateFamilies(tableId, limited);
    } catch (e) {
      await this.meta.remove(metaKey).catch(() => undefined);
      throw mapBigtableError(e, { doing: `creating Bigtable table ${tableId}` });
    }
    await this.metaCall(`creating table ${layout.name}`, () => this.meta.removeCell(metaKey, CREATING));
  }

  async listTables(instance: string): Promise<string[]> {
    await this.requireInstance(instance);
    return (await this.createdTables(instance)).map((r) => r.name);
  }

  /** The meta rows of an instance's tables, without those still being created (or interrupted). */
  private async createdTables(instance: string): Promise<{ name: string; cells: Map<string, Buffer> }[]> {
    const prefix = `table/${instance}/`;
    const rows = await this.metaCall(`listing tables of ${instance}`, () => this.meta.scanPrefix(prefix));
    return rows.filter((r) => !r.cells.has(CREATING)).map((r) => ({ name: r.key.slice(prefix.length), cells: r.cells }));
  }

  async getLayout(instance: string, table: string): Promise<TableLayout> {
    return (await this.openTable(instance, table)).layout;
  }

  // ------------------------------------------------------------ reads

  async get(instance: string, table: string, rowKeys: readonly Buffer[], read: ReadSpec): Promise<RowOut[]> {
    const t = await this.openTable(instance, table);
    const found = new Map<string, RowOut>();
    const filter = buildReadFilter(t.layout, read);
    const picker = new CellPicker(t.layout, read);
    for (let i = 0; i < rowKeys.length; i += GET_KEYS_PER_CALL) {
      const keys = rowKeys.slice(i, i + GET_KEYS_PER_CALL);
      const chunks = await this.dataCall(t, 'reading rows', () =>
        this.client.readAllChunks(t.tableId, { rows: { rowKeys: [...keys] }, ...(filter ? { filter } : {}) }),
      );
      for (const raw of new ChunkMerger().pushAll(chunks)) {
        const row = pickRow(raw, picker, t.counters);
        if (row) found.set(row.rowKey.toString('latin1'), row);
      }
    }
    return rowKeys.map((rowKey) => ({ rowKey, cells: found.get(rowKey.toString('latin1'))?.cells ?? [] }));
  }

  scan(instance: string, table: string, request: ScanRequest): RowScan {
    return new BigtableScan(() => this.scanTable(instance, table), request, this.scanCounts);
  }

  /** The table as a scan reads it, its ReadRows stream made ready (the client's gRPC stub connects lazily). */
  private async scanTable(instance: string, table: string): Promise<ScanTable> {
    const t = await this.openTable(instance, table);
    await this.client.wireReady();
    return {
      layout: t.layout,
      counters: t.counters,
      readRows: (request) => this.client.readRowsWire(t.tableId, request),
      failure: (e, doing) => this.dataError(t, e, doing),
    };
  }

  /**
   * Bigtable's own split points (SampleRowKeys): each sample is a row key and the stored bytes
   * before it; an empty key stands for the end of the table. No row counts: Bigtable gives none.
   */
  async splits(instance: string, table: string, parts: number): Promise<KeySplit[]> {
    const t = await this.openTable(instance, table);
    const samples = await this.dataCall(t, 'sampling row keys', () => this.client.sampleRowKeys(t.tableId));
    const pieces: KeySplit[] = [];
    let start: Buffer | undefined;
    let offset = 0;
    for (const s of samples) {
      const end = s.rowKey.length === 0 ? undefined : s.rowKey;
      if (end !== undefined && start !== undefined && Buffer.compare(end, start) <= 0) continue;
      pieces.push({ start, end, estimatedBytes: Math.max(0, s.offsetBytes - offset) });
      start = end;
      offset = s.offsetBytes;
      if (end === undefined) break;
    }
    if (start !== undefined) pieces.push({ start, estimatedBytes: 0 });
    return groupPieces(pieces, parts);
  }

  // ------------------------------------------------------------ writes

  /** Rows go to Bigtable as row objects (mutations): nothing is packed on the parsing threads. */
  readonly packing = undefined;

  /** One write of every slice's rows: Bigtable's MutateRows takes them as row objects anyway. */
  async writeSlices(instance: string, table: string, slices: Iterable<readonly RowWrite[]>): Promise<void> {
    const rows: RowWrite[] = [];
    for (const slice of slices) rows.push(...slice);
    await this.write(instance, table, rows);
  }

  /** Bigtable has no transaction over a batch of rows and a record: no marker is kept (an import keeps its progress in its file only, import-progress.ts). */
  async batchMarker(): Promise<string | undefined> {
    return undefined;
  }

  async clearBatchMarker(): Promise<void> {}

  /** With `packing` undefined every part is row objects: written in order as one write. A marker is ignored (batchMarker). */
  async writePacked(instance: string, table: string, parts: readonly (PackedRows | readonly RowWrite[])[], _marker?: BatchMarker): Promise<void> {
    const rows: RowWrite[] = [];
    for (const part of parts) {
      if (!Array.isArray(part)) throw new Error('the Bigtable store takes no packed rows (its packing is undefined)');
      rows.push(...(part as readonly RowWrite[]));
    }
    await this.write(instance, table, rows);
  }

  async write(instance: string, table: string, rows: readonly RowWrite[]): Promise<void> {
    const t = await this.openTable(instance, table);
    for (const row of rows) this.checkRow(t, row.rowKey, row.cells);
    await this.applyIncrements(t, rows);
    const entries: MutateEntry[] = [];
    for (const row of rows) {
      const now = Date.now();
      const mutations: Mutation[] = [];
      for (const cell of row.cells) {
        if (cell.kind === 'counter-increment') continue;
        const timestampMicros = micros(cell.timestamp ?? now);
        const value = cell.kind === 'value' ? encodeValueCell(cell.schemaId, cell.json) : int64(cell.value);
        mutations.push({ setCell: { familyName: cell.family, columnQualifier: Buffer.from(cell.qualifier, 'utf8'), timestampMicros, value } });
      }
      if (mutations.length > 0) entries.push({ rowKey: row.rowKey, mutations });
    }
    await this.mutate(t, entries, 'writing');
  }

  /**
   * Counter increments, one ReadModifyWrite per row. Bigtable wraps on overflow, so the new value
   * tells whether it overflowed; an overflow is undone (by the opposite increment) together with
   * the batch's earlier increments, and the batch is rejected before its other cells are written.
   */
  private async applyIncrements(t: OpenTable, rows: readonly RowWrite[]): Promise<void> {
    const done: { rowKey: Buffer; rules: { family: string; qualifier: Buffer; amount: bigint }[] }[] = [];
    for (const row of rows) {
      const sums = new Map<string, { family: string; qualifier: string; amount: bigint }>();
      for (const cell of row.cells) {
        if (cell.kind !== 'counter-increment') continue;
        const id = `${cell.family}\u0000${cell.qualifier}`;
        const prev = sums.get(id);
        sums.set(id, { family: cell.family, qualifier: cell.qualifier, amount: (prev?.amount ?? 0n) + cell.delta });
      }
      if (sums.size === 0) continue;
      const rules = [...sums.values()]
        .filter((s) => s.amount !== 0n)
        .map((s) => ({ family: s.family, qualifier: Buffer.from(s.qualifier, 'utf8'), amount: s.amount }));
      if (rules.length === 0) continue;
      for (const r of rules) {
        if (!isInt64(r.amount)) {
          await this.undoIncrements(t, done);
          throw counterOverflow(r.family, r.qualifier.toString(), r.amount);
        }
      }
      await this.dropExpiredCounters(t, row.rowKey, rules);
      const cells = await this.dataCall(t, 'incrementing counters', () => this.client.increment(t.tableId, row.rowKey, rules));
      done.push({ rowKey: row.rowKey, rules });
      for (const r of rules) {
        const cell = cells.find((c) => c.family === r.family && c.qualifier.equals(r.qualifier));
        if (!cell || cell.value.length !== 8) continue;
        const value = cell.value.readBigInt64BE(0);
        const overflowed = r.amount > 0n ? value < INT64_MIN + r.amount : value > INT64_MAX + r.amount;
        if (overflowed) {
          await this.undoIncrements(t, done);
          throw counterOverflow(r.family, r.qualifier.toString(), r.amount);
        }
      }
    }
  }

  /**
   * ReadModifyWrite adds to the newest cell even when it has outlived ttl_seconds (GC is lazy: the
   * emulator read back 42 after +1 on a 41 set an hour ago in a 60 s family, though reads hid the
   * 41). Deleting the expired cells first makes an expired counter count as absent, as reads see
   * it and as the LMDB store does. Only cells no read can return are deleted.
   */
  private async dropExpiredCounters(t: OpenTable, rowKey: Buffer, rules: readonly { family: string; qualifier: Buffer }[]): Promise<void> {
    const now = Date.now();
    const mutations: Mutation[] = [];
    for (const r of rules) {
      const expiredBefore = expiryOf(t.layout.families.get(r.family)?.ttlSeconds ?? FOREVER, now);
      if (expiredBefore === -Infinity) continue;
      // Expired as reads see it (the read filter's lower bound); the delete's end is exclusive.
      const endTimestampMicros = micros(expiredBefore);
      mutations.push({
        deleteFromColumn: { familyName: r.family, columnQualifier: r.qualifier, timeRange: { startTimestampMicros: '0', endTimestampMicros } },
      });
    }
    if (mutations.length > 0) await this.dataCall(t, 'dropping expired counter cells', () => this.client.mutateRow(t.tableId, rowKey, mutations));
  }

  private async undoIncrements(t: OpenTable, done: { rowKey: Buffer; rules: { family: string; qualifier: Buffer; amount: bigint }[] }[]): Promise<void> {
    for (const d of done.reverse()) {
      // Wrapping arithmetic: adding the negation restores the previous value exactly.
      const undo = d.rules.map((r) => ({ ...r, amount: BigInt.asIntN(64, -r.amount) }));
      await this.dataCall(t, 'undoing counter increments', () => this.client.increment(t.tableId, d.rowKey, undo));
    }
  }

  async delete(instance: string, table: string, deletes: readonly RowDelete[]): Promise<void> {
    const t = await this.openTable(instance, table);
    for (const d of deletes) {
      checkDeletedFamily(t.layout, d);
      if (d.rowKey.length > MAX_ROW_KEY)
        throw rgError('RG_ERR_ROW_KEY_TOO_LONG', `row key of ${d.rowKey.length} bytes exceeds Bigtable's limit of ${MAX_ROW_KEY} bytes`);
    }
    const entries: MutateEntry[] = [];
    for (const d of deletes) {
      if (d.upToTimestamp === undefined) {
        const mutation: Mutation =
          d.family === undefined
            ? { deleteFromRow: {} }
            : d.qualifier === undefined
              ? { deleteFromFamily: { familyName: d.family } }
              : { deleteFromColumn: { familyName: d.family, columnQualifier: Buffer.from(d.qualifier, 'utf8') } };
        entries.push({ rowKey: d.rowKey, mutations: [mutation] });
        continue;
      }
      // Versions up to a timestamp: a time-ranged delete per column (Bigtable has it for columns only).
      // Every cell Bigtable can hold is at or before a later timestamp: then all versions go.
      const timeRange = d.upToTimestamp >= MAX_BIGTABLE_TIMESTAMP ? undefined : { endTimestampMicros: micros(BigInt(d.upToTimestamp) + 1n) };
      let columns: { family: string; qualifier: string }[];
      if (d.family !== undefined && d.qualifier !== undefined) {
        columns = [{ family: d.family, qualifier: d.qualifier }];
      } else {
        columns = await this.columnsOf(t, d.rowKey, d.family);
      }
      if (columns.length > 0) {
        entries.push({
          rowKey: d.rowKey,
          mutations: columns.map((c) => ({ deleteFromColumn: { familyName: c.family, columnQualifier: Buffer.from(c.qualifier, 'utf8'), timeRange } })),
        });
      }
    }
    await this.mutate(t, entries, 'deleting');
  }

  /** The columns a row has (in one family, or all), read without values. */
  private async columnsOf(t: OpenTable, rowKey: Buffer, family: string | undefined): Promise<{ family: string; qualifier: string }[]> {
    const strip = { stripValueTransformer: true };
    const filter = family === undefined ? strip : { chain: { filters: [{ familyNameRegexFilter: family }, strip] } };
    const chunks = await this.dataCall(t, 'reading columns', () => this.client.readAllChunks(t.tableId, { rows: { rowKeys: [rowKey] }, filter }));
    const seen = new Map<string, { family: string; qualifier: string }>();
    for (const row of new ChunkMerger().pushAll(chunks)) {
      for (const c of row.cells) seen.set(`${c.family}\u0000${c.qualifier}`, { family: c.family, qualifier: c.qualifier });
    }
    return [...seen.values()];
  }

  /**
   * MutateRows in calls of bounded size, a few at a time. Entries that fail with a transient status
   * are retried (every mutation carries its timestamp, so a retry is idempotent); any other failed
   * entry fails the write with a coded error naming how many rows were not written.
   */
  private async mutate(t: OpenTable, entries: readonly MutateEntry[], doing: string): Promise<void> {
    const calls: MutateEntry[][] = [];
    let current: MutateEntry[] = [];
    let mutations = 0;
    for (const entry of entries) {
      if (current.length > 0 && (current.length >= MUTATE_ROWS_PER_CALL || mutations + entry.mutations.length > MUTATIONS_PER_CALL)) {
        calls.push(current);
        current = [];
        mutations = 0;
      }
      current.push(entry);
      mutations += entry.mutations.length;
    }
    if (current.length > 0) calls.push(current);
    const failures: EntryFailure[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < calls.length) {
        const call = calls[next++]!;
        failures.push(...(await this.mutateWithRetry(t, call, doing)));
      }
    };
    await Promise.all(Array.from({ length: Math.min(MUTATE_CONCURRENCY, calls.length) }, worker));
    if (failures.length > 0) throw mutateFailureError(failures, entries.length, `${doing} table ${t.layout.name}`);
  }

  /** One MutateRows call, its transiently failed entries retried; returns the entries that still failed. */
  private async mutateWithRetry(t: OpenTable, entries: MutateEntry[], doing: string): Promise<EntryFailure[]> {
    let pending = entries;
    for (let attempt = 1; ; attempt++) {
      let statuses: EntryStatus[];
      try {
        statuses = await this.client.mutateRows(t.tableId, pending);
      } catch (e) {
        const code = grpcCode(e);
        if (code !== undefined && RETRYABLE.has(code) && attempt < MUTATE_ATTEMPTS) {
          await delay(50 * 2 ** attempt);
          continue;
        }
        throw this.dataError(t, e, `${doing} table ${t.layout.name}`);
      }
      const failed = pending.map((entry, i) => ({ entry, status: statuses[i]! })).filter((f) => f.status.code !== 0);
      const retry = failed.filter((f) => RETRYABLE.has(f.status.code));
      if (failed.length === 0 || retry.length < failed.length || attempt >= MUTATE_ATTEMPTS) {
        return failed.map((f) => ({ rowKey: f.entry.rowKey, ...f.status }));
      }
      pending = retry.map((f) => f.entry);
      await delay(50 * 2 ** attempt);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  // ------------------------------------------------------------ helpers

  private checkRow(t: OpenTable, rowKey: Buffer, cells: readonly EncodedCell[]): void {
    if (rowKey.length > MAX_ROW_KEY) {
      throw rgError('RG_ERR_ROW_KEY_TOO_LONG', `row key of ${rowKey.length} bytes exceeds Bigtable's limit of ${MAX_ROW_KEY} bytes`);
    }
    if (rowKey.length === 0) throw rgError('RG_ERR_BAD_ROW_KEY', 'an empty row key cannot be stored in Bigtable');
    for (const cell of cells) {
      checkWrittenFamily(t.layout, cell);
      if (Buffer.byteLength(cell.qualifier) > MAX_QUALIFIER) {
        throw rgError('RG_ERR_UNKNOWN_COLUMN', `qualifier ${cell.qualifier.slice(0, 64)}... exceeds Bigtable's limit of ${MAX_QUALIFIER} bytes`);
      }
      if (cell.kind !== 'counter-increment' && cell.timestamp !== undefined && cell.timestamp > MAX_BIGTABLE_TIMESTAMP) {
        throw rgError(
          'RG_ERR_BAD_TIMESTAMP',
          `timestamp ${cell.timestamp} of column ${cell.family}:${cell.qualifier} is too large for Bigtable, which keeps microseconds in 64 bits: the largest timestamp it accepts is ${MAX_BIGTABLE_TIMESTAMP} ms`,
        );
      }
    }
  }

  private async metaCall<T>(doing: string, fn: () => Promise<T>): Promise<T> {
    return this.client.call({ doing }, fn);
  }

  private async dataCall<T>(t: OpenTable, doing: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw this.dataError(t, e, `${doing} in table ${t.layout.name}`);
    }
  }

  /**
   * The coded error of a failed call on a table's data (a scan's too, through its ScanTable). NOT_FOUND means
   * the Bigtable table is gone: the cached layout is dropped, so the next call reads the meta table
   * again (the table may have been removed, or re-created with another layout).
   */
  private dataError(t: OpenTable, e: unknown, doing: string): RowgateError {
    const error = mapBigtableError(e, { doing, instance: t.instance, table: t.layout.name });
    if (error.code === 'RG_ERR_TABLE_NOT_FOUND' && this.tables.get(t.instance, t.layout.name) === t) this.tables.forget(t.instance, t.layout.name);
    return error;
  }

  private async requireInstance(instance: string): Promise<{ dataVersion: string }> {
    if (this.instances.has(instance)) return { dataVersion: DATA_VERSION };
    const row = isStoreName(instance) ? await this.metaCall(`reading instance ${instance}`, () => this.meta.get(`instance/${instance}`)) : undefined;
    const info = row?.get('info');
    if (!info) throw rgError('RG_ERR_INSTANCE_NOT_FOUND', `instance ${instance} not found`);
    this.instances.add(instance);
    return { dataVersion: (JSON.parse(info.toString('utf8')) as { dataVersion?: string }).dataVersion ?? DATA_VERSION };
  }

  /** One object per instance (callers cache by identity); a Bigtable failure inside is a coded error. */
  private schemaTableOf(instance: string): SchemaTable {
    let s = this.schemaTables.get(instance);
    if (!s) {
      const table = new BigtableSchemaTable(this.meta, instance);
      s = {
        schemaOf: (id) => this.metaCall(`reading schema ${id} of ${instance}`, () => table.schemaOf(id)),
        idOf: (json) => this.metaCall(`registering a schema in ${instance}`, () => table.idOf(json)),
        entries: () => this.metaCall(`reading the schema table of ${instance}`, () => table.entries()),
      };
      this.schemaTables.set(instance, s);
    }
    return s;
  }

  forget(instance: string, table?: string): void {
    this.tables.forget(instance, table);
    if (table !== undefined) return;
    this.instances.delete(instance);
    this.schemaTables.delete(instance);
  }

  /**
   * The open table, from cache. Only found tables that are fully created are cached (another
   * gateway may create one any time); an entry is dropped when Bigtable says the table is gone.
   */
  private async openTable(instance: string, table: string): Promise<OpenTable> {
    const cached = this.tables.get(instance, table);
    if (cached) return cached;
    await this.requireInstance(instance);
    const row = isStoreName(table) ? await this.metaCall(`reading table ${table}`, () => this.meta.get(`table/${instance}/${table}`)) : undefined;
    if (!row) throw rgError('RG_ERR_TABLE_NOT_FOUND', `table ${table} not found in instance ${instance}`);
    if (row.has(CREATING)) throw rgError('RG_ERR_TABLE_NOT_FOUND', `table ${table} not found in instance ${instance} (it is being created)`);
    const record = parseRecord(row);
    const layout = parseLayout(record.layout);
    const opened: OpenTable = { instance, layout, tableId: record.bigtable, counters: new CounterColumns(layout) };
    this.tables.set(instance, table, opened);
    return opened;
  }
}

/** Column families with GC rules from the locality groups' max_versions and ttl_seconds. */
function familiesOf(layout: TableLayout): Record<string, { gcRule: Record<string, unknown> }> {
  const out: Record<string, { gcRule: Record<string, unknown> }> = {};
  for (const family of layout.families.values()) {
    const rules: Record<string, unknown>[] = [];
    if (family.maxVersions < FOREVER) rules.push({ maxNumVersions: family.maxVersions });
    if (family.ttlSeconds < FOREVER) rules.push({ maxAge: { seconds: String(family.ttlSeconds) } });
    out[family.name] = { gcRule: rules.length === 0 ? {} : rules.length === 1 ? rules[0]! : { union: { rules } } };
  }
  return out;
}

/** `<prefix>.<instance>.<table>`, or `<prefix>.<sha1>` when that exceeds Bigtable's 50 characters. */
export function bigtableTableId(prefix: string, instance: string, table: string): string {
  const plain = `${prefix}.${instance}.${table}`;
  if (plain.length <= MAX_TABLE_ID) return plain;
  const hash = createHash('sha1').update(`${instance}/${table}`).digest('hex');
  return `${prefix}.${hash}`.slice(0, MAX_TABLE_ID);
}

function parseRecord(cells: Map<string, Buffer>): TableRecord {
  return JSON.parse(cells.get('layout')!.toString('utf8')) as TableRecord;
}

function int64(value: bigint): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigInt64BE(value, 0);
  return b;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
