/**
 * The meta table (`<tablePrefix>.meta`): instances, table layouts and schema tables, one row each,
 * in family `m` (one version kept). Creating a row that must be unique uses CheckAndMutate, so two
 * gateways racing to create the same instance or table see exactly one success.
 */
import type { BigtableClient, Mutation } from './bigtable-client.js';
import { ChunkMerger } from './row-assembler.js';

export const META_FAMILY = 'm';

export class MetaTable {
  constructor(
    private readonly client: BigtableClient,
    readonly tableId: string,
  ) {}

  /** Creates the meta table when it does not exist yet. */
  async ensure(): Promise<void> {
    await this.client.createTable(this.tableId, { [META_FAMILY]: { gcRule: { maxNumVersions: 1 } } });
  }

  async get(key: string): Promise<Map<string, Buffer> | undefined> {
    const rows = await this.read({ rows: { rowKeys: [Buffer.from(key)] } });
    return rows.length > 0 ? rows[0]!.cells : undefined;
  }

  async scanPrefix(prefix: string): Promise<{ key: string; cells: Map<string, Buffer> }[]> {
    const start = Buffer.from(prefix);
    const end = Buffer.from(prefix);
    end[end.length - 1]!++;
    return this.read({ rows: { rowRanges: [{ startKeyClosed: start, endKeyOpen: end }] } });
  }

  async set(key: string, cells: Record<string, Buffer>): Promise<void> {
    await this.client.mutateRow(this.tableId, Buffer.from(key), setCells(cells));
  }

  /** Writes the row only when it has no cells; true when this call created it. */
  async createIfAbsent(key: string, cells: Record<string, Buffer>): Promise<boolean> {
    return this.client.mutateIfEmpty(this.tableId, Buffer.from(key), setCells(cells));
  }

  /** Deletes one cell of a row. */
  async removeCell(key: string, qualifier: string): Promise<void> {
    await this.client.mutateRow(this.tableId, Buffer.from(key), [{ deleteFromColumn: { familyName: META_FAMILY, columnQualifier: Buffer.from(qualifier) } }]);
  }

  async remove(key: string): Promise<void> {
    await this.client.mutateRow(this.tableId, Buffer.from(key), [{ deleteFromRow: {} }]);
  }

  /** Atomically adds `amount` to an 8-byte counter cell; returns the new value. */
  async increment(key: string, qualifier: string, amount: bigint): Promise<bigint[]> {
    const cells = await this.client.increment(this.tableId, Buffer.from(key), [{ family: META_FAMILY, qualifier: Buffer.from(qualifier), amount }]);
    return cells.map((c) => c.value.readBigInt64BE(0));
  }

  private async read(request: { rows: object }): Promise<{ key: string; cells: Map<string, Buffer> }[]> {
    const chunks = await this.client.readAllChunks(this.tableId, { ...request, filter: { cellsPerColumnLimitFilter: 1 } });
    return new ChunkMerger().pushAll(chunks).map((r) => ({ key: r.rowKey.toString(), cells: new Map(r.cells.map((c) => [c.qualifier, c.value])) }));
  }
}

function setCells(cells: Record<string, Buffer>): Mutation[] {
  // Meta rows keep one version: -1 = the server's time.
  return Object.entries(cells).map(([q, value]) => ({ setCell: { familyName: META_FAMILY, columnQualifier: Buffer.from(q), timestampMicros: '-1', value } }));
}
