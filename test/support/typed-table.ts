/**
 * A table with a column of every value type the columnar formats type from the layout (string, long,
 * int, double, float, boolean, bytes, a record, a counter) and a map family of longs, its rows, and
 * what a Parquet reader (hyparquet) should read for a column of a row given the JSON export's
 * document of it: the Parquet tests compare every value against the JSON export.
 */
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { join } from 'node:path';
import type { RowWrite } from '../../lib/model/types.js';
import { valueCell } from './flat-table.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { serveCli, tempDir } from '../cli/helpers.js';

export const TYPED_LAYOUT = `{
  name: "typed",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "name", type: "STRING"}, {name: "n", type: "LONG"}]},
  locality_groups: [{
    name: "default", in_memory: false, max_versions: 10, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [
      {name: "f", columns: [
        {name: "s", column_schema: {storage: "UID", type: "INLINE", value: '"string"'}},
        {name: "l", column_schema: {storage: "UID", type: "INLINE", value: '"long"'}},
        {name: "i", column_schema: {storage: "UID", type: "INLINE", value: '"int"'}},
        {name: "d", column_schema: {storage: "UID", type: "INLINE", value: '"double"'}},
        {name: "fl", column_schema: {storage: "UID", type: "INLINE", value: '"float"'}},
        {name: "b", column_schema: {storage: "UID", type: "INLINE", value: '"boolean"'}},
        {name: "by", column_schema: {storage: "UID", type: "INLINE", value: '"bytes"'}},
        {name: "rec", column_schema: {storage: "UID", type: "INLINE",
          value: '{"type": "record", "name": "Rec", "fields": [{"name": "u", "type": "string"}, {"name": "p", "type": "long"}]}'}},
        {name: "n", column_schema: {type: "COUNTER", storage: "FINAL"}}
      ]},
      {name: "longs", map_schema: {storage: "UID", type: "INLINE", value: '"long"'}}
    ]
  }],
  version: "layout-1.3.0"
}`;

type Cell = { timestamp: number | bigint; value: unknown };
export type Doc = { entityId: unknown[]; cells: Record<string, Record<string, Cell[]>> };

/** `n` rows: some cells absent (every fifth row no f:s, every third no f:l), two versions of f:s, f:l, f:rec and the map. */
export function typedRows(n: number): RowWrite[] {
  const format = parseLayout(TYPED_LAYOUT).keyFormat;
  const out: RowWrite[] = [];
  const cell = (qualifier: string, timestamp: number, json: string, family = 'f'): RowWrite['cells'][number] => valueCell(family, qualifier, timestamp, json);
  for (let i = 0; i < n; i++) {
    const cells: RowWrite['cells'][number][] = [];
    if (i % 5 !== 0) cells.push(cell('s', 20 + i, JSON.stringify(`s ${i}\r\n"é`)), cell('s', 10, '"older"'));
    if (i % 3 !== 0) cells.push(cell('l', 7, String(9007199254740993n + BigInt(i))), cell('l', 6, '-9223372036854775808'));
    cells.push(
      cell('i', 1, String(i - 150)),
      cell('d', 1, i % 2 === 0 ? '1.5e300' : String(i / 7)),
      cell('fl', 1, '0.1'),
      cell('b', 1, i % 2 === 0 ? 'true' : 'false'),
      cell('by', 1, JSON.stringify(String.fromCharCode(0, 255, i % 256))),
      cell('rec', 2, `{"u":"u${i}","p":${9007199254740993n * BigInt(i % 3)}}`),
      cell('rec', 1, '{"u":"old","p":1}'),
      cell('n', 1, String(i * 1000)),
      cell(`q${i % 4}`, 3, String(i), 'longs'),
      cell(`q${i % 4}`, 2, '-1', 'longs'),
      cell('other', 1, '42', 'longs'),
    );
    out.push({ rowKey: encodeRowKey(format, [`u${i}`, BigInt(i)]), cells });
  }
  return out;
}

const LONGS = new Set(['f:l', 'f:n', 'longs']);

/** A value of column `column` (`family:qualifier` or a map family's name) as hyparquet reads it. */
function typed(column: string, value: unknown): unknown {
  if (LONGS.has(column)) return BigInt(String(value));
  switch (column) {
    case 'f:i':
    case 'f:d':
      return Number(value);
    case 'f:fl':
      return Math.fround(Number(value));
    case 'f:by':
      return new Uint8Array(Buffer.from(String(value), 'latin1'));
    case 'f:rec': {
      // A record is a struct (Parquet group) of its typed fields.
      const rec = value as { u: string; p: unknown };
      return { u: rec.u, p: BigInt(String(rec.p)) };
    }
    default:
      return value;
  }
}

function cellsValue(column: string, cells: Cell[] | undefined, versions: number): unknown {
  if (versions === 1) return cells === undefined || cells.length === 0 ? null : typed(column, cells[0]!.value);
  return (cells ?? []).slice(0, versions).map((c) => ({ timestamp: BigInt(String(c.timestamp)), value: typed(column, c.value) }));
}

/** What the Parquet file should hold in `column` for the row whose JSON export document is `doc`. */
export function expectedValue(doc: Doc, column: string, versions: number): unknown {
  if (!column.includes(':')) {
    return Object.fromEntries(Object.entries(doc.cells[column] ?? {}).map(([q, cells]) => [q, cellsValue(column, cells, versions)]));
  }
  const [family, qualifier] = column.split(':') as [string, string];
  return cellsValue(column, doc.cells[family]?.[qualifier], versions);
}

/** A store at `data` holding `rows` in the table `typed`. */
export async function typedStore(data: string, rows: RowWrite[]): Promise<void> {
  const store = new LmdbStore({ path: data });
  await store.createInstance('default');
  await store.createTable('default', parseLayout(TYPED_LAYOUT));
  await store.write('default', 'typed', rows);
  await store.close();
}

/**
 * A served gateway (a `rowgate serve` process, as a user runs it) over a store holding `rows` in
 * the table `typed`; its base URL.
 */
export async function servedTypedTable(t: { teardown(fn: () => unknown): void }, rows: RowWrite[]): Promise<string> {
  const data = join(tempDir(t), 'data');
  await typedStore(data, rows);
  const served = await serveCli(t, ['--data', data, '--port', '0', '--host', '127.0.0.1']);
  t.teardown(() => served.stop());
  return `http://127.0.0.1:${served.port}`;
}
