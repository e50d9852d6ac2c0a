/**
 * A table whose columns are all flat (string, long, int, double, float, boolean, bytes, nullable
 * ones and a counter) and its rows: values plain and not (escaped strings, longs past 2^53,
 * doubles with exponents or 17 digits), each column absent from some rows, some with older
 * versions. The Arrow and Avro encoders read such rows from their stored bytes
 * (lib/store/lmdb/stored-columns.ts); test/store/arrow-chunks.test.ts and avro-chunks.test.ts
 * compare what they make with the reference stages'.
 */
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { RowWrite, TableLayout } from '../../lib/model/types.js';

export const FLAT_LAYOUT = `{
  name: "flat",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 1}, components: [{name: "who", type: "STRING"}, {name: "k", type: "INTEGER"}, {name: "n", type: "LONG"}]},
  locality_groups: [{name: "default", in_memory: false, max_versions: 4, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "f", columns: [
      {name: "s", column_schema: {type: "INLINE", value: '"string"'}},
      {name: "l", column_schema: {type: "INLINE", value: '"long"'}},
      {name: "i", column_schema: {type: "INLINE", value: '"int"'}},
      {name: "d", column_schema: {type: "INLINE", value: '"double"'}},
      {name: "fl", column_schema: {type: "INLINE", value: '"float"'}},
      {name: "b", column_schema: {type: "INLINE", value: '"boolean"'}},
      {name: "by", column_schema: {type: "INLINE", value: '"bytes"'}},
      {name: "ns", column_schema: {type: "INLINE", value: '["null", "string"]'}},
      {name: "nl", column_schema: {type: "INLINE", value: '["long", "null"]'}},
      {name: "c", column_schema: {type: "COUNTER", storage: "FINAL"}}]}]}],
  version: "layout-1.3.0"
}`;

export const flatLayout = (): TableLayout => parseLayout(FLAT_LAYOUT);

/** A value cell at `timestamp` holding the JSON text `json`. */
export const valueCell = (family: string, qualifier: string, timestamp: number, json: string): RowWrite['cells'][number] => ({
  kind: 'value',
  family,
  qualifier,
  timestamp,
  schemaId: 0,
  json,
});

const DOUBLES = (i: number): string => ['1.5e300', String(i / 7), `${i - 300}.25`, '-0', `0.${i}`][i % 5]!;

/** A row's LONG key component: past 2^53, negative across the 32-bit word boundary, or small. */
const LONGS = (i: number): bigint => (i % 3 === 0 ? BigInt(i % 1000) * 9007199254740993n : i % 3 === 1 ? -BigInt(i) * 4294967311n : BigInt(i * 7));

/** `n` rows of the flat table. */
export function flatRows(n: number): RowWrite[] {
  const format = flatLayout().keyFormat;
  return Array.from({ length: n }, (_, i) => ({
    // Half the STRING components ASCII, half not: the Arrow fill reads those two from the key differently.
    rowKey: encodeRowKey(format, [`w${i % 13}${i % 2 === 0 ? '' : 'é'}`, i - 300, LONGS(i)]),
    cells: [
      ...(i % 5 === 0
        ? []
        : [valueCell('f', 's', 20 + i, JSON.stringify(i % 2 === 0 ? `plain ${i} é\u{1F600}` : `s ${i}\r\n"é`)), valueCell('f', 's', 10, '"older"')]),
      ...(i % 3 === 0 ? [] : [valueCell('f', 'l', 7, i % 2 === 0 ? String(-9007199254740993n * BigInt(i % 1000)) : String(i * 1_000_003 - 4_000_000))]),
      ...(i % 7 === 0 ? [] : [valueCell('f', 'i', 1, String(i % 2 === 0 ? i - 150 : -2147483648 + i))]),
      ...(i % 4 === 0 ? [] : [valueCell('f', 'd', 1, DOUBLES(i)), valueCell('f', 'fl', 1, i % 2 === 0 ? '0.1' : '3.4028234663852886e38')]),
      ...(i % 6 === 0 ? [] : [valueCell('f', 'b', 2 + (i % 3), i % 2 === 0 ? 'true' : 'false'), valueCell('f', 'b', 1, 'true')]),
      ...(i % 8 === 0 ? [] : [valueCell('f', 'by', 1, JSON.stringify(String.fromCharCode(0, 255, i % 256)))]),
      valueCell('f', 'ns', 3, i % 2 === 0 ? 'null' : JSON.stringify(`n${i}`)),
      ...(i % 9 === 0 ? [] : [valueCell('f', 'nl', 3, i % 3 === 0 ? 'null' : String(i))]),
      { kind: 'counter-set' as const, family: 'f', qualifier: 'c', timestamp: 2, value: BigInt(i) * 1_000_000_007n },
    ],
  }));
}
