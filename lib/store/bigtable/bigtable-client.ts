/**
 * A thin typed layer over the Bigtable client's raw gapic calls (`bigtable.request`). Raw calls
 * are used throughout because the convenience API loses information the gateway needs: it
 * replaces a timestamp of 0 with the current time, drops numeric time-range bounds, and turns
 * binary qualifiers into object keys (docs/bigtable.md, "The client library: why raw calls").
 */
import { Bigtable } from '@google-cloud/bigtable';
import type { Readable } from 'node:stream';
import { bigtableDataStub, grpcMetadata, grpcMethod, type GrpcStub } from '../../deps/internals.js';
import { GRPC, grpcCode, mapBigtableError, type EntryStatus, type ErrorContext } from './bigtable-errors.js';
import type { CellChunk } from './row-assembler.js';

export interface BigtableConnection {
  readonly projectId: string;
  readonly instanceId: string;
  /** Turns the client's Cloud Monitoring export on (off unless the configuration asks). */
  readonly metrics?: boolean;
}

export interface Mutation {
  readonly setCell?: { familyName: string; columnQualifier: Buffer; timestampMicros: string; value: Buffer };
  readonly deleteFromColumn?: { familyName: string; columnQualifier: Buffer; timeRange?: { startTimestampMicros?: string; endTimestampMicros?: string } };
  readonly deleteFromFamily?: { familyName: string };
  readonly deleteFromRow?: Record<string, never>;
}

export interface MutateEntry {
  readonly rowKey: Buffer;
  readonly mutations: readonly Mutation[];
}

export interface ReadRowsRequest {
  readonly rows?: { rowKeys?: Buffer[]; rowRanges?: { startKeyClosed?: Buffer; endKeyOpen?: Buffer }[] };
  readonly filter?: Record<string, unknown>;
  readonly rowsLimit?: number;
}

/** A ReadRows response stream: objects `{chunks}`; `abort()` cancels the gRPC call. */
export type ReadRowsStream = Readable & { abort(): void };

const READ_ROWS_TIMEOUT_MS = 43_200_000;

export interface RmwCell {
  readonly family: string;
  readonly qualifier: Buffer;
  readonly value: Buffer;
  readonly timestampMicros: string;
}

export class BigtableClient {
  readonly bigtable: Bigtable;
  readonly instancePath: string;

  constructor(readonly connection: BigtableConnection) {
    this.bigtable = new Bigtable({ projectId: connection.projectId, metricsEnabled: connection.metrics ?? false });
    this.instancePath = `projects/${connection.projectId}/instances/${connection.instanceId}`;
  }

  tablePath(tableId: string): string {
    return `${this.instancePath}/tables/${tableId}`;
  }

  private unary<T>(client: 'BigtableClient' | 'BigtableTableAdminClient', method: string, reqOpts: object): Promise<T> {
    return new Promise((resolve, reject) => {
      this.bigtable.request<T>({ client, method, reqOpts }, (err: unknown, response?: unknown) => (err ? reject(err) : resolve(response as T)));
    });
  }

  /** Creates a table; false when it already exists. */
  async createTable(tableId: string, families: Record<string, { gcRule: Record<string, unknown> }>): Promise<boolean> {
    try {
      await this.unary('BigtableTableAdminClient', 'createTable', {
        parent: this.instancePath,
        tableId,
        table: { columnFamilies: families, granularity: 'MILLIS' },
      });
      return true;
    } catch (e) {
      if (grpcCode(e) === GRPC.ALREADY_EXISTS) return false;
      throw e;
    }
  }

  /** Sets families' GC rules again (on the emulator, GC runs only after such a call). */
  async updateFamilies(tableId: string, families: Record<string, { gcRule: Record<string, unknown> }>): Promise<void> {
    const modifications = Object.entries(families).map(([id, f]) => ({ id, update: f }));
    if (modifications.length === 0) return;
    await this.unary('BigtableTableAdminClient', 'modifyColumnFamilies', { name: this.tablePath(tableId), modifications });
  }

  private stub: GrpcStub | undefined;

  /** Makes sure readRowsWire can be called (the gapic client connects its stub lazily). */
  async wireReady(): Promise<void> {
    this.stub ??= await bigtableDataStub(this.bigtable);
  }

  /**
   * ReadRows whose stream yields each ReadRowsResponse as its protobuf bytes (decode them with
   * read-rows-wire.ts), skipping the client's decode into objects and its stream layers. The
   * request is serialized by the client's own serializer and carries the routing header the
   * client sends. Call wireReady() once first.
   */
  readRowsWire(tableId: string, request: ReadRowsRequest): ReadRowsStream {
    const stub = this.stub;
    if (!stub) throw new Error('readRowsWire before wireReady');
    const method = grpcMethod(stub, 'ReadRows');
    const tableName = this.tablePath(tableId);
    const metadata = grpcMetadata();
    metadata.set('x-goog-request-params', `table_name=${encodeURIComponent(tableName)}`);
    // The deadline the client's own ReadRows has (bigtable_client_config.json: 12 h, no retries).
    const call = stub.makeServerStreamRequest(method.path, method.requestSerialize, (bytes) => bytes, { tableName, ...request }, metadata, {
      deadline: Date.now() + READ_ROWS_TIMEOUT_MS,
    });
    return Object.assign(call, { abort: () => call.cancel() });
  }

  readRows(tableId: string, request: ReadRowsRequest): ReadRowsStream {
    return this.bigtable.request({
      client: 'BigtableClient',
      method: 'readRows',
      reqOpts: { tableName: this.tablePath(tableId), ...request },
    }) as unknown as ReadRowsStream;
  }

  /** Reads every chunk of a (small) read into memory. */
  async readAllChunks(tableId: string, request: ReadRowsRequest): Promise<CellChunk[]> {
    const chunks: CellChunk[] = [];
    for await (const response of this.readRows(tableId, request)) chunks.push(...((response as { chunks?: CellChunk[] }).chunks ?? []));
    return chunks;
  }

  /** SampleRowKeys: row keys splitting the table, each with the stored bytes before it, in key order. */
  async sampleRowKeys(tableId: string): Promise<{ rowKey: Buffer; offsetBytes: number }[]> {
    const stream = this.bigtable.request({
      client: 'BigtableClient',
      method: 'sampleRowKeys',
      reqOpts: { tableName: this.tablePath(tableId) },
    }) as unknown as Readable;
    const out: { rowKey: Buffer; offsetBytes: number }[] = [];
    for await (const r of stream) {
      const sample = r as { rowKey?: Uint8Array; offsetBytes?: string | number };
      out.push({ rowKey: Buffer.from(sample.rowKey ?? []), offsetBytes: Number(sample.offsetBytes ?? 0) });
    }
    return out;
  }

  /** MutateRows: the status of each entry, in order (code 0 = applied); an entry without one is UNAVAILABLE. */
  async mutateRows(tableId: string, entries: readonly MutateEntry[]): Promise<EntryStatus[]> {
    const statuses: EntryStatus[] = entries.map(() => ({ code: GRPC.UNAVAILABLE, message: 'no status received for the entry' }));
    const stream = this.bigtable.request({
      client: 'BigtableClient',
      method: 'mutateRows',
      reqOpts: { tableName: this.tablePath(tableId), entries },
    }) as unknown as Readable;
    for await (const response of stream) {
      for (const entry of (response as { entries?: { index?: string | number; status?: { code?: number; message?: string } }[] }).entries ?? []) {
        const code = entry.status?.code ?? 0;
        statuses[Number(entry.index ?? 0)] = code === 0 ? { code } : { code, message: entry.status?.message ?? '' };
      }
    }
    return statuses;
  }

  /** CheckAndMutateRow with no predicate: applies `ifEmpty` only when the row has no cells. Returns true when it did. */
  async mutateIfEmpty(tableId: string, rowKey: Buffer, ifEmpty: readonly Mutation[]): Promise<boolean> {
    const r = await this.unary<{ predicateMatched?: boolean }>('BigtableClient', 'checkAndMutateRow', {
      tableName: this.tablePath(tableId),
      rowKey,
      falseMutations: ifEmpty,
    });
    return !r.predicateMatched;
  }

  async mutateRow(tableId: string, rowKey: Buffer, mutations: readonly Mutation[]): Promise<void> {
    await this.unary('BigtableClient', 'mutateRow', { tableName: this.tablePath(tableId), rowKey, mutations });
  }

  /** ReadModifyWriteRow increments; returns the new cells. */
  async increment(tableId: string, rowKey: Buffer, rules: readonly { family: string; qualifier: Buffer; amount: bigint }[]): Promise<RmwCell[]> {
    const r = await this.unary<{
      row?: { families?: { name: string; columns?: { qualifier: Buffer; cells?: { value: Buffer; timestampMicros: string }[] }[] }[] };
    }>('BigtableClient', 'readModifyWriteRow', {
      tableName: this.tablePath(tableId),
      rowKey,
      rules: rules.map((r) => ({ familyName: r.family, columnQualifier: r.qualifier, incrementAmount: r.amount.toString() })),
    });
    const out: RmwCell[] = [];
    for (const f of r.row?.families ?? []) {
      for (const c of f.columns ?? []) {
        const cell = c.cells?.[0];
        if (cell)
          out.push({ family: f.name, qualifier: Buffer.from(c.qualifier), value: Buffer.from(cell.value), timestampMicros: String(cell.timestampMicros) });
      }
    }
    return out;
  }

  /** Runs `fn`, mapping a failure to a coded error. */
  async call<T>(context: ErrorContext, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw mapBigtableError(e, context);
    }
  }

  async close(): Promise<void> {
    await this.bigtable.close();
  }
}
