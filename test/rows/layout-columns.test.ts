/**
 * The columnar formats' one column plan (lib/rows/formats/layout-columns.ts): the column type each
 * cell schema gets (primitives, enum, fixed, records, arrays, maps, nullable and multi-branch
 * unions; JSON text for recursive records and schemas the layout does not hold), the JavaScript
 * values read from stored Avro JSON text (longs near 2^63 exact inside records, bare union cells
 * resolved to their branch), a value that does not match its schema refused as a 400, and how
 * arrow-columns.ts maps the nested types for the Arrow stream (a sparse union) and for Parquet
 * (the union a struct of its branches, which parquet-wasm writes as a group; FIXED_LEN_BYTE_ARRAY).
 */
import t from 'tap';
import { tableFromIPC } from 'apache-arrow';
import { arrow } from '../../lib/deps/arrow.js';
import { RowgateError } from '../../lib/errors.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { CellSchemaSpec, RowOut } from '../../lib/model/types.js';
import { ArrowColumns } from '../../lib/rows/formats/arrow-columns.js';
import { cellPlanOf, LayoutColumns } from '../../lib/rows/formats/layout-columns.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { ParquetEncodeStage } from '../../lib/rows/stages/parquet.js';

const spec = (type: CellSchemaSpec['type'], more: Partial<CellSchemaSpec> = {}): CellSchemaSpec => ({
  type,
  storage: 'UID',
  avroValidationPolicy: 'DEVELOPER',
  readers: [],
  writers: [],
  ...more,
});
const inline = (schema: unknown): CellSchemaSpec => spec('INLINE', { value: JSON.stringify(schema) });

const POINT = {
  type: 'record',
  name: 'Point',
  fields: [
    { name: 'x', type: 'double' },
    { name: 'y', type: 'long' },
  ],
};
const OUTER = {
  type: 'record',
  name: 'Outer',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'inner', type: { type: 'record', name: 'Inner', fields: [{ name: 'label', type: ['null', 'string'] }] } },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'scores', type: { type: 'map', values: { type: 'array', items: 'long' } } },
    { name: 'shade', type: { type: 'enum', name: 'Shade', symbols: ['DARK', 'LIGHT'] } },
    { name: 'tag', type: { type: 'fixed', name: 'Tag', size: 2 } },
    { name: 'either', type: ['int', 'string'] },
    { name: 'again', type: 'Inner' },
  ],
};
const NODE = {
  type: 'record',
  name: 'Node',
  fields: [
    { name: 'v', type: 'long' },
    { name: 'next', type: ['null', 'Node'] },
  ],
};

t.test('each cell schema gets its column type: nested types typed, recursive records and unheld schemas JSON text', async (t) => {
  const typeOf = (s: CellSchemaSpec) => cellPlanOf(s).type;
  t.same(typeOf(inline('long')), { kind: 'long' });
  t.same(typeOf(inline({ type: 'string' })), { kind: 'string' }, 'the object form of a primitive');
  t.same(typeOf(inline(['null', 'double'])), { kind: 'double' }, '["null", T] is T');
  t.same(typeOf(inline({ type: 'enum', name: 'E', symbols: ['A'] })), { kind: 'string' }, 'an enum is its symbol');
  t.same(typeOf(inline({ type: 'fixed', name: 'F', size: 16 })), { kind: 'fixed', size: 16 });
  t.same(typeOf(inline({ type: 'array', items: POINT })), {
    kind: 'list',
    items: {
      kind: 'record',
      fields: [
        { name: 'x', type: { kind: 'double' } },
        { name: 'y', type: { kind: 'long' } },
      ],
    },
  });
  t.same(typeOf(inline({ type: 'map', values: { type: 'array', items: 'long' } })), { kind: 'map', values: { kind: 'list', items: { kind: 'long' } } });
  const inner = { kind: 'record', fields: [{ name: 'label', type: { kind: 'string' } }] };
  t.same(typeOf(inline(OUTER)), {
    kind: 'record',
    fields: [
      { name: 'id', type: { kind: 'long' } },
      { name: 'inner', type: inner },
      { name: 'tags', type: { kind: 'list', items: { kind: 'string' } } },
      { name: 'scores', type: { kind: 'map', values: { kind: 'list', items: { kind: 'long' } } } },
      { name: 'shade', type: { kind: 'string' } },
      { name: 'tag', type: { kind: 'fixed', size: 2 } },
      {
        name: 'either',
        type: {
          kind: 'union',
          branches: [
            { name: 'int', type: { kind: 'int' } },
            { name: 'string', type: { kind: 'string' } },
          ],
        },
      },
      { name: 'again', type: inner },
    ],
  });
  t.same(typeOf(inline(['null', POINT])), typeOf(inline(POINT)), 'a nullable record is the record');
  t.same(
    typeOf(inline(['null', 'long', 'string', POINT])),
    {
      kind: 'union',
      branches: [
        { name: 'long', type: { kind: 'long' } },
        { name: 'string', type: { kind: 'string' } },
        { name: 'Point', type: typeOf(inline(POINT)) },
      ],
    },
    'null leaves a union of several types',
  );
  t.same(typeOf(inline(NODE)), { kind: 'json' }, 'a record that refers to itself has no finite type');
  t.same(typeOf(inline({ type: 'record', name: 'N', fields: [{ name: 'z', type: 'null' }] })), { kind: 'json' }, 'a field of type null');
  t.same(typeOf(inline({ type: 'record', name: 'Empty', fields: [] })), { kind: 'json' }, 'a record without fields');
  t.same(typeOf(spec('COUNTER', { storage: 'FINAL' })), { kind: 'long' });
  t.same(typeOf(spec('RAW_BYTES')), { kind: 'bytes' });
  t.same(typeOf(spec('AVRO', { defaultReader: { json: JSON.stringify(POINT) } })), typeOf(inline(POINT)), 'AVRO: its default reader given inline');
  t.same(typeOf(spec('AVRO', { defaultReader: { uid: 3 } })), { kind: 'json' }, 'AVRO by uid: not in the layout');
  t.same(typeOf(spec('CLASS', { value: 'org.example.Thing' })), { kind: 'json' });
});

t.test('values come from the stored Avro JSON: longs exact in records, bare union cells by branch, maps as Maps', async (t) => {
  const outer = cellPlanOf(inline(OUTER)).decode;
  t.same(
    outer(
      '{"id":9223372036854775807,"inner":{"label":{"string":"x"}},"tags":["a"],"scores":{"k":[-9223372036854775808,1]},' +
        '"shade":"LIGHT","tag":"\\u0000\\u00ff","either":{"int":-4},"again":{"label":null}}',
    ),
    {
      id: 9223372036854775807n,
      inner: { label: 'x' },
      tags: ['a'],
      scores: new Map([['k', [-9223372036854775808n, 1n]]]),
      shade: 'LIGHT',
      tag: Buffer.from([0, 255]),
      either: { int: -4 },
      again: { label: null },
    },
  );
  const multi = cellPlanOf(inline(['null', 'long', 'string', POINT])).decode;
  t.same(multi('9223372036854775806'), { long: 9223372036854775806n }, 'a bare long is the long branch');
  t.same(multi('"w"'), { string: 'w' });
  t.same(multi('{"x":0.5,"y":-3}'), { Point: { x: 0.5, y: -3n } });
  t.equal(multi('null'), null);
  const maybe = cellPlanOf(inline(['null', POINT])).decode;
  t.equal(maybe('null'), null);
  t.same(maybe('{"x":1,"y":2}'), { x: 1, y: 2n });
  t.equal(cellPlanOf(inline(NODE)).decode('{"v":1,"next":null}'), '{"v":1,"next":null}', 'JSON text as stored');
  t.same(cellPlanOf(inline({ type: 'fixed', name: 'F', size: 2 })).decode('"ab"'), Buffer.from('ab'));
});

t.test('a string column reads escaped and unescaped JSON text alike', async (t) => {
  const decode = cellPlanOf(inline('string')).decode;
  for (const value of ['', 'plain text', 'a "quoted" \\ back\\slash', 'tab\tnew\nline', 'caf\u00e9 \u20ac \ud83d\ude00', '\\', 'x"']) {
    t.equal(decode(JSON.stringify(value)), value, JSON.stringify(value));
  }
  t.equal(decode('"\\u00e9"'), '\u00e9', 'an escape in the text is decoded');
  t.equal(decode('"\\""'), '"', 'an escaped quote');
});

const LAYOUT = parseLayout(`{
  name: "n",
  keys_format: {encoding: "RAW"},
  locality_groups: [{name: "default", in_memory: false, max_versions: 10, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [
      {name: "f", columns: [
        {name: "pt", column_schema: {type: "INLINE", storage: "UID", value: '${JSON.stringify(POINT)}'}},
        {name: "u", column_schema: {type: "INLINE", storage: "UID", value: '["int", "string"]'}},
        {name: "fx", column_schema: {type: "INLINE", storage: "UID", value: '{"type": "fixed", "name": "F", "size": 3}'}}
      ]},
      {name: "m", map_schema: {type: "INLINE", storage: "UID", value: '{"type": "array", "items": "long"}'}}
    ]}],
  version: "layout-1.3.0"
}`);
const cell = (family: string, qualifier: string, timestamp: number, json: string) => ({ family, qualifier, timestamp, schemaId: 1, json });
const ROWS: RowOut[] = [
  {
    rowKey: Buffer.from('a'),
    cells: [
      cell('f', 'fx', 5, '"abc"'),
      cell('f', 'pt', 9, '{"x":1.5,"y":9223372036854775807}'),
      cell('f', 'pt', 4, '{"x":0,"y":1}'),
      cell('f', 'u', 5, '"s"'),
      cell('m', 'q', 5, '[1,-2]'),
    ],
  },
  { rowKey: Buffer.from('b'), cells: [cell('f', 'u', 5, '7')] },
];

t.test('a row: nested columns newest first, lists of versions, a map family of arrays', async (t) => {
  const values: unknown[] = [];
  new LayoutColumns(LAYOUT, 1).rowValues(ROWS[0]!, values);
  t.same(values.slice(1), [{ x: 1.5, y: 9223372036854775807n }, { string: 's' }, Buffer.from('abc'), new Map([['q', [1n, -2n]]])]);
  new LayoutColumns(LAYOUT, 2).rowValues(ROWS[0]!, values);
  t.same(values[1], [
    { timestamp: 9n, value: { x: 1.5, y: 9223372036854775807n } },
    { timestamp: 4n, value: { x: 0, y: 1n } },
  ]);
  new LayoutColumns(LAYOUT, 1).rowValues(ROWS[1]!, values);
  t.same(values.slice(1), [null, { int: 7 }, null, new Map()], 'absent cells null, a bare 7 the int branch');
});

t.test('a stored value that does not match its schema is a 400 naming the column', async (t) => {
  const bad: RowOut = { rowKey: Buffer.from('c'), cells: [cell('f', 'pt', 1, '{"x":"no","y":1}')] };
  let error: unknown;
  try {
    new LayoutColumns(LAYOUT, 1).rowValues(bad, []);
  } catch (e) {
    error = e;
  }
  t.ok(error instanceof RowgateError, 'a RowgateError');
  t.equal((error as RowgateError).code, 'RG_ERR_BAD_PARAMETER');
  t.match((error as Error).message, /column f:pt .*at \.x: expected double/);
});

t.test('Arrow: a record a struct, a union a sparse union, fixed fixed-size binary, read back by apache-arrow', async (t) => {
  const batch = new ArrowColumns(LAYOUT, 1).batchOf(ROWS);
  t.same(
    batch.schema.fields.map((f) => `${f.name} ${String(f.type)}`),
    ['row_key Binary', 'f:pt Struct<{x:Float64, y:Int64}>', 'f:u Union<Int32 | Utf8>', 'f:fx FixedSizeBinary[3]', 'm Map<{key:Utf8, value:List<Int64>}>'],
  );
  // The batch is the door's (lib/deps/arrow.ts): written by its writer, read by the module entry.
  const table = tableFromIPC(arrow.tableToIPC(new arrow.Table(batch), 'stream'));
  const u = table.getChild('f:u')!;
  t.same([u.get(0), u.get(1)], ['s', 7], 'each row its branch');
  t.same(Array.from(u.data[0]!.typeIds.subarray(0, 2)), [1, 0], 'the branches: string, int');
  t.same((table.getChild('f:pt')!.get(0) as { toJSON(): unknown }).toJSON(), { x: 1.5, y: 9223372036854775807n });
  t.equal(table.getChild('f:pt')!.get(1), null);
  t.same([...(table.getChild('f:fx')!.get(0) as Uint8Array)], [...Buffer.from('abc')]);
});

t.test('Parquet: a record a group, a union a group of its branches, fixed FIXED_LEN_BYTE_ARRAY, read back by hyparquet', async (t) => {
  t.same(
    new ArrowColumns(LAYOUT, 1, 'struct').batchOf([]).schema.fields.map((f) => `${f.name} ${String(f.type)}`),
    [
      'row_key Binary',
      'f:pt Struct<{x:Float64, y:Int64}>',
      'f:u Struct<{int:Int32, string:Utf8}>',
      'f:fx FixedSizeBinary[3]',
      'm Map<{key:Utf8, value:List<Int64>}>',
    ],
  );
  const chunks: Buffer[] = [];
  await pipeline(Readable.from([ROWS], { objectMode: true }), new ParquetEncodeStage(LAYOUT, 1), async (src: AsyncIterable<Buffer>) => {
    for await (const c of src) chunks.push(c);
  });
  const file = Buffer.concat(chunks);
  const bytes = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
  const leaves = parquetMetadata(bytes)
    .schema.filter((e) => e.num_children === undefined)
    .map((e) => `${e.name} ${e.type} ${e.repetition_type}${e.type_length === undefined ? '' : ` ${e.type_length}`}`);
  t.same(leaves, [
    'row_key BYTE_ARRAY OPTIONAL',
    'x DOUBLE OPTIONAL',
    'y INT64 OPTIONAL',
    'int INT32 OPTIONAL',
    'string BYTE_ARRAY OPTIONAL',
    'f:fx FIXED_LEN_BYTE_ARRAY OPTIONAL 3',
    'key BYTE_ARRAY REQUIRED',
    'item INT64 OPTIONAL',
  ]);
  const rows = await parquetReadObjects({ file: bytes });
  t.same(rows[0]!['f:pt'], { x: 1.5, y: 9223372036854775807n });
  t.same(rows[0]!['f:u'], { int: null, string: 's' }, "the union's branch set, the other null");
  t.same(rows[1]!['f:u'], { int: 7, string: null });
  t.equal(rows[1]!['f:pt'] ?? null, null, 'an absent record null (hyparquet reads a null group as undefined)');
  t.same([...(rows[0]!['f:fx'] as Uint8Array)], [...Buffer.from('abc')]);
  t.same(rows[0]!.m, { q: [1n, -2n] });
});
