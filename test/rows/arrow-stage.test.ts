/**
 * ArrowEncodeStage (lib/rows/stages/arrow.ts, columns from lib/rows/formats/arrow-columns.ts): a
 * batch of rows becomes an Arrow IPC stream that apache-arrow's reader reads back with typed
 * columns: row_key binary, entity id components typed, Avro columns typed (a record a struct;
 * test/rows/layout-columns.test.ts covers the nested types), absent cells null, a map family a
 * map; with versions > 1 a list of {timestamp, value} newest first; no rows still gives the schema.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import { tableFromIPC } from 'apache-arrow';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowOut } from '../../lib/model/types.js';
import { ArrowEncodeStage } from '../../lib/rows/stages/arrow.js';

const LAYOUT = parseLayout(`{
  name: "a",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "s", type: "STRING"}, {name: "n", type: "LONG"}], nullable_start_index: 1},
  locality_groups: [{name: "default", in_memory: false, max_versions: 10, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [
      {name: "f", columns: [
        {name: "str", column_schema: {type: "INLINE", storage: "UID", value: '"string"'}},
        {name: "lng", column_schema: {type: "INLINE", storage: "UID", value: '"long"'}},
        {name: "i", column_schema: {type: "INLINE", storage: "UID", value: '"int"'}},
        {name: "d", column_schema: {type: "INLINE", storage: "UID", value: '"double"'}},
        {name: "b", column_schema: {type: "INLINE", storage: "UID", value: '"boolean"'}},
        {name: "by", column_schema: {type: "INLINE", storage: "UID", value: '"bytes"'}},
        {name: "rec", column_schema: {type: "INLINE", storage: "UID", value: '{"type":"record","name":"R","fields":[{"name":"x","type":"int"}]}'}},
        {name: "cnt", column_schema: {type: "COUNTER", storage: "FINAL"}}
      ]},
      {name: "m", map_schema: {type: "INLINE", storage: "UID", value: '"int"'}}
    ]}],
  version: "layout-1.3.0"
}`);

const key = (s: string, n: bigint | null): Buffer => encodeRowKey(LAYOUT.keyFormat, n === null ? [s] : [s, n]);
const cell = (family: string, qualifier: string, timestamp: number, json: string) => ({ family, qualifier, timestamp, schemaId: 1, json });
const ROWS: RowOut[] = [
  {
    rowKey: key('a', 9007199254740993n),
    cells: [
      cell('f', 'str', 20, '"new \\"q\\""'),
      cell('f', 'str', 10, '"old"'),
      cell('f', 'lng', 5, '-9223372036854775808'),
      cell('f', 'i', 5, '-7'),
      cell('f', 'd', 5, '1.5'),
      cell('f', 'b', 5, 'true'),
      cell('f', 'by', 5, '"\\u0000\\u00ff"'),
      cell('f', 'rec', 5, '{"x":3}'),
      cell('f', 'cnt', 5, '42'),
      cell('m', 'k1', 5, '1'),
      cell('m', 'k2', 5, '2'),
    ],
  },
  { rowKey: key('b', null), cells: [] },
];

async function streamOf(rows: RowOut[][], versions: number, batchRows?: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(Readable.from(rows, { objectMode: true }), new ArrowEncodeStage(LAYOUT, versions, batchRows), async (src: AsyncIterable<Buffer>) => {
    for await (const c of src) chunks.push(c);
  });
  return Buffer.concat(chunks);
}

t.test('newest values in typed columns, nulls for absent cells, a map family a map', async (t) => {
  const table = tableFromIPC(await streamOf([ROWS], 1));
  t.same(
    table.schema.fields.map((f) => `${f.name} ${String(f.type)}`),
    [
      'row_key Binary',
      's Utf8',
      'n Int64',
      'f:str Utf8',
      'f:lng Int64',
      'f:i Int32',
      'f:d Float64',
      'f:b Bool',
      'f:by Binary',
      'f:rec Struct<{x:Int32}>',
      'f:cnt Int64',
      'm Map<{key:Utf8, value:Int32}>',
    ],
  );
  t.equal(table.numRows, 2);
  const [a, b] = table.toArray().map((r) => r.toJSON() as Record<string, unknown>);
  t.same(Buffer.from(a!['row_key'] as Uint8Array), ROWS[0]!.rowKey);
  t.equal(a!['s'], 'a');
  t.equal(a!['n'], 9007199254740993n);
  t.equal(a!['f:str'], 'new "q"');
  t.equal(a!['f:lng'], -9223372036854775808n);
  t.equal(a!['f:i'], -7);
  t.equal(a!['f:d'], 1.5);
  t.equal(a!['f:b'], true);
  t.same([...(a!['f:by'] as Uint8Array)], [0, 255]);
  t.same((a!['f:rec'] as { toJSON(): unknown }).toJSON(), { x: 3 }, 'a record is a struct of its typed fields');
  t.equal(a!['f:cnt'], 42n);
  t.same(Object.fromEntries([...(a!['m'] as Iterable<[string, number]>)]), { k1: 1, k2: 2 });
  t.equal(b!['s'], 'b');
  t.equal(b!['n'], null);
  t.equal(b!['f:str'], null);
});

t.test('versions > 1: a list of {timestamp, value} newest first; a record batch each batchRows rows', async (t) => {
  const table = tableFromIPC(await streamOf([[ROWS[0]!], [ROWS[1]!]], 3, 1));
  t.equal(table.batches.length, 2);
  const str = table
    .getChild('f:str')!
    .get(0)!
    .toArray()
    .map((s: { toJSON(): unknown }) => s.toJSON());
  t.same(str, [
    { timestamp: 20n, value: 'new "q"' },
    { timestamp: 10n, value: 'old' },
  ]);
  t.same(table.getChild('f:str')!.get(1)!.toArray(), []);
});

t.test('no rows: the schema and the end of the stream', async (t) => {
  const table = tableFromIPC(await streamOf([], 1));
  t.equal(table.numRows, 0);
  t.equal(table.schema.fields.length, 12);
});
