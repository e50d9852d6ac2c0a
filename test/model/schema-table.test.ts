import t from 'tap';
import {
  avroTypeOf,
  canonicalSchemaJson,
  FIRST_USER_SCHEMA_ID,
  MemorySchemaTable,
  PRE_REGISTERED_SCHEMAS,
  SCHEMA_ID,
} from '../../lib/model/avro/schema-table.js';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import type { JsonValue } from '../../lib/model/types.js';

t.test('pre-registered schemas are ids 0-7 in Kiji order; first user id is 8', async (t) => {
  t.same(PRE_REGISTERED_SCHEMAS, ['"string"', '"bytes"', '"int"', '"long"', '"float"', '"double"', '"boolean"', '"null"']);
  t.equal(FIRST_USER_SCHEMA_ID, 8);
  t.equal(SCHEMA_ID.long, 3);
  t.equal(SCHEMA_ID.null, 7);
});

t.test('memory schema table: pre-registered ids, next id 8, stable ids, unknown ids', async (t) => {
  const table = new MemorySchemaTable();
  t.equal(await table.schemaOf(0), '"string"');
  t.equal(await table.schemaOf(7), '"null"');
  t.equal(await table.idOf('"long"'), 3);
  t.equal(await table.schemaOf(8), undefined);
  t.equal(await table.schemaOf(-1), undefined);
  t.equal(await table.schemaOf(1.5), undefined);
  const rec = canonicalSchemaJson({ type: 'record', name: 'R', fields: [{ name: 'a', type: 'int' }] });
  const union = canonicalSchemaJson(['null', 'string']);
  t.equal(await table.idOf(rec), 8);
  t.equal(await table.idOf(union), 9);
  t.equal(await table.idOf(rec), 8, 'a known schema keeps its id');
  t.equal(await table.schemaOf(9), union);
  t.same((await table.entries()).slice(7), [
    { id: 7, json: '"null"' },
    { id: 8, json: rec },
    { id: 9, json: union },
  ]);
});

t.test('canonical JSON: every spelling of a primitive is the quoted name', async (t) => {
  for (const s of ['string', '"string"', ' "string" ', '{"type":"string"}', { type: 'string' }, { type: 'string', doc: 'x', foo: 1 }] as (
    string | JsonValue
  )[]) {
    t.equal(canonicalSchemaJson(s), '"string"', JSON.stringify(s));
  }
  t.equal(canonicalSchemaJson({ type: 'long', logicalType: 'timestamp-millis' }), '"long"');
  t.equal(canonicalSchemaJson({ type: 'int', logicalType: 'date' }), '"int"');
  t.equal(canonicalSchemaJson('["null", {"type": "long"}]'), '["null","long"]');
});

t.test('canonical JSON: full names, fixed key order, docs dropped, resolution attributes kept', async (t) => {
  const schema = parseExactJson(
    `{"doc": "d", "fields": [
        {"name": "l", "type": "long", "default": 9223372036854775807, "order": "descending", "aliases": ["ll"], "doc": "x"},
        {"name": "u", "type": ["null", "long"], "default": null},
        {"name": "u2", "type": ["long", "null"], "default": 5},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"], "default": "A"}},
        {"name": "e2", "type": "E"},
        {"name": "i", "type": {"type": "record", "name": "I", "namespace": "", "fields": [{"name": "b", "type": "bytes", "default": "\\u00ff"}]}},
        {"name": "f", "type": {"type": "fixed", "name": "F", "namespace": "z", "size": 2}},
        {"name": "m", "type": {"type": "map", "values": {"type": "string"}}, "default": {}},
        {"name": "a", "type": {"type": "array", "items": "int"}, "default": [1, 2]}
     ], "type": "record", "name": "Rec", "namespace": "a.b", "aliases": ["Old"]}`,
    'schema',
  );
  const expected =
    '{"name":"a.b.Rec","type":"record","fields":[' +
    '{"name":"l","type":"long","default":9223372036854775807,"order":"descending","aliases":["ll"]},' +
    '{"name":"u","type":["null","long"],"default":null},' +
    '{"name":"u2","type":["long","null"],"default":5},' +
    '{"name":"e","type":{"name":"a.b.E","type":"enum","symbols":["A","B"],"default":"A"}},' +
    '{"name":"e2","type":"a.b.E"},' +
    '{"name":"i","type":{"name":"I","namespace":"","type":"record","fields":[{"name":"b","type":"bytes","default":"\u00ff"}]}},' +
    '{"name":"f","type":{"name":"z.F","type":"fixed","size":2}},' +
    '{"name":"m","type":{"type":"map","values":"string"},"default":{}},' +
    '{"name":"a","type":{"type":"array","items":"int"},"default":[1,2]}' +
    '],"aliases":["a.b.Old"]}';
  const canonical = canonicalSchemaJson(schema);
  t.equal(canonical, expected);
  t.equal(canonicalSchemaJson(canonical), canonical, 'canonical of canonical is itself');
  t.equal(
    canonicalSchemaJson(JSON.stringify({ fields: [{ type: 'int', name: 'a' }], name: 'a.R', type: 'record' })),
    '{"name":"a.R","type":"record","fields":[{"name":"a","type":"int"}]}',
  );
});

t.test('canonical JSON: an escaped schema string is read as schema text', async (t) => {
  t.equal(canonicalSchemaJson('{"type":"record","name":"R","fields":[]}'), '{"name":"R","type":"record","fields":[]}');
  t.equal(canonicalSchemaJson('"null"'), '"null"');
  t.equal(canonicalSchemaJson('null'), '"null"', 'a bare word is a type name, never JSON null');
});

t.test('invalid schemas are RG_ERR_BAD_SCHEMA naming the schema and the problem', async (t) => {
  const cases: [string | JsonValue, RegExp][] = [
    ['strin', /^invalid Avro schema strin: undefined type name: strin$/],
    ['org.x.Rec', /undefined type name: org.x.Rec/],
    ['{"type":"record"', /^invalid Avro schema \{"type":"record": schema is not valid JSON: .* at position 16$/],
    [{ type: 'record', fields: [] }, /missing name/],
    [['null', 'null'], /duplicate union branch/],
    [{ type: 'record', name: 'R', fields: [{ name: 'x', type: 'long', default: 1.5 }] }, /incompatible field default 1.5/],
    [{ type: 'record', name: 'R', fields: [{ name: 'x', type: 'int', default: 'a' }] }, /incompatible field default/],
    [{ type: 'enum', name: 'E', symbols: [] }, /invalid enum symbols/],
    [{ type: 'fixed', name: 'F' }, /invalid F size/],
    [{ type: 'nope' }, /unknown type: "nope"/],
    [{ type: 'array' }, /items/],
    [null, /invalid type: null/],
    [42, /invalid Avro schema 42/],
  ];
  for (const [schema, message] of cases) {
    t.throws(() => canonicalSchemaJson(schema), { code: 'RG_ERR_BAD_SCHEMA', message }, JSON.stringify(schema));
  }
});

t.test('avroTypeOf caches types and reads longs beyond 2^53 exactly', async (t) => {
  const long = avroTypeOf('"long"');
  t.equal(avroTypeOf('"long"'), long, 'same Type object for the same text');
  const max = 9223372036854775807n;
  t.equal(long.fromBuffer(long.toBuffer(max)), max);
  t.equal(long.fromBuffer(long.toBuffer(-max - 1n)), -max - 1n);
  const rec = avroTypeOf('{"name":"R","type":"record","fields":[{"name":"n","type":{"type":"long"},"default":9007199254740993}]}');
  const v = rec.fromBuffer(rec.toBuffer({ n: 9007199254740993n }));
  t.equal(v.n, 9007199254740993n, 'the object form {"type":"long"} is the exact long too');
});
