import t from 'tap';
import { COUNTER_SCHEMA_ID, encodeCell, renderCounter, type EncodeCellArgs } from '../../lib/model/cells/cell-codec.js';
import { avroTypeOf, canonicalSchemaJson, MemorySchemaTable } from '../../lib/model/avro/schema-table.js';
import { avroFromJson, avroToJson } from '../../lib/model/avro/avro-json.js';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import type { CellSchemaSpec, EncodedCell, JsonValue } from '../../lib/model/types.js';
import { avroSchema, classSchema, counter, handLayout, inline, rawBytes } from './helpers/hand-layout.js';

const TEAM: JsonValue = {
  type: 'record',
  name: 'Team',
  namespace: 'org.kiji.rest.sample_avro',
  fields: [
    { name: 'id', type: ['null', 'long'] },
    { name: 'name', type: ['null', 'string'] },
    { name: 'barracks_status', type: ['null', 'long'], default: null },
  ],
};
const V1: JsonValue = { type: 'record', name: 'V', fields: [{ name: 'a', type: 'int' }] };
const V2: JsonValue = {
  type: 'record',
  name: 'V',
  fields: [
    { name: 'a', type: 'long' },
    { name: 'b', type: 'string', default: 'dflt' },
  ],
};

const layout = handLayout('t', {
  info: {
    columns: {
      name: inline('"string"'),
      age: inline('"int"'),
      big: inline('{"type": "long"}'),
      ratio: inline('"float"'),
      score: inline('"double"'),
      flag: inline('"boolean"'),
      nothing: inline('"null"'),
      blob: inline('"bytes"'),
      raw: rawBytes(),
      union: inline('["string", "null"]'),
      team: inline(TEAM),
      color: inline({ type: 'enum', name: 'Color', symbols: ['RED', 'GREEN'] }),
      tags: inline({ type: 'array', items: 'string' }),
      attrs: inline({ type: 'map', values: 'long' }),
      hash: inline({ type: 'fixed', name: 'Hash', size: 4 }),
      logins: counter(),
      v: avroSchema({ defaultReader: { json: JSON.stringify(V2) } }),
      avro_uid: avroSchema({ defaultReader: { uid: 3 } }),
      strict: avroSchema({ avroValidationPolicy: 'STRICT', defaultReader: { json: '"long"' }, writers: [{ json: '"int"' }, { json: '["null","long"]' }] }),
      free: avroSchema({}),
      klass: classSchema('org.example.Thing'),
      proto: { ...inline('"string"'), type: 'PROTOBUF' } as CellSchemaSpec,
    },
  },
  strings: { map: inline('"string"') },
  counters: { map: counter() },
});

function args(column: string, value: JsonValue, extra: Partial<EncodeCellArgs> = {}): EncodeCellArgs {
  const colon = column.indexOf(':');
  return { layout, family: column.slice(0, colon), qualifier: column.slice(colon + 1), value, schemas: new MemorySchemaTable(), writerSchemas: true, ...extra };
}

async function encode(column: string, value: JsonValue, extra: Partial<EncodeCellArgs> = {}): Promise<EncodedCell> {
  return encodeCell(args(column, value, extra));
}

/** The value cell's json and schema id. */
async function stored(column: string, value: JsonValue, extra: Partial<EncodeCellArgs> = {}): Promise<[string, number]> {
  const cell = await encode(column, value, extra);
  if (cell.kind !== 'value') throw new Error(`not a value cell: ${cell.kind}`);
  return [cell.json, cell.schemaId];
}

t.test('a string cell stores its JSON text, the string schema id and the timestamp', async (t) => {
  t.same(await encode('info:name', 'hello\r\nworld', { timestamp: 42 }), {
    kind: 'value',
    family: 'info',
    qualifier: 'name',
    schemaId: 0,
    json: '"hello\\r\\nworld"',
    timestamp: 42,
  });
});

t.test('timestamp absent or null means server time; a long 0..2^63-1 is kept exactly; anything else is refused', async (t) => {
  t.notOk('timestamp' in (await encode('info:name', 'x')));
  t.notOk('timestamp' in (await encode('info:name', 'x', { timestamp: null })));
  t.match(await encode('info:name', 'x', { timestamp: 0 }), { timestamp: 0 });
  t.equal(((await encode('info:name', 'x', { timestamp: 2 ** 53 - 1 })) as { timestamp?: unknown }).timestamp, 2 ** 53 - 1, 'a safe integer stays a number');
  // Beyond 2^53-1 exact-json gives bigints, and they stay bigints (a number there may be rounded).
  for (const ts of [2n ** 53n, 2n ** 53n + 1n, 8646911284551352319n, 2n ** 63n - 1n]) {
    t.equal(((await encode('info:name', 'x', { timestamp: ts })) as { timestamp?: unknown }).timestamp, ts, String(ts));
  }
  for (const ts of [-1, -0.5, -1.5, '-5', '1.5', ' 5', '5 ', '', '0x10', '1e3', '9223372036854775808', 2n ** 63n, 2 ** 63, 1e19, -5n, true] as JsonValue[]) {
    await t.rejects(encode('info:name', 'x', { timestamp: ts }), {
      code: 'RG_ERR_BAD_TIMESTAMP',
      message: `timestamp of column info:name must be an integer of milliseconds from 0 to 9223372036854775807, got ${typeof ts === 'string' ? JSON.stringify(ts) : String(ts)}`,
    });
  }
  for (const ts of [[], {}, Infinity] as JsonValue[]) await t.rejects(encode('info:name', 'x', { timestamp: ts }), { code: 'RG_ERR_BAD_TIMESTAMP' });
});

t.test("timestamps as KijiREST's Jackson binding into a Long took them: fractions truncated, strings of digits read", async (t) => {
  const stamp = async (ts: JsonValue) => ((await encode('info:name', 'x', { timestamp: ts })) as { timestamp?: unknown }).timestamp;
  // Python's Put(timestamp=time.time()*1000) sends a fraction; it truncates toward zero.
  t.equal(await stamp(1795827221153.123), 1795827221153);
  t.equal(await stamp(1.5), 1);
  t.equal(await stamp(0.999), 0);
  t.equal(await stamp(1.5e3), 1500, 'an exponent');
  t.equal(await stamp(1.0), 1);
  // A double beyond 2^53 is integral: the long is its value, a bigint as every timestamp there is.
  t.equal(await stamp(2 ** 53), 2n ** 53n);
  t.equal(await stamp(9.2e18), 9200000000000000000n);
  // A string of digits reads as the number, exactly to 2^63-1.
  t.equal(await stamp('1000'), 1000);
  t.equal(await stamp('0'), 0);
  t.equal(await stamp('0001000'), 1000);
  t.equal(await stamp('9007199254740993'), 9007199254740993n);
  t.equal(await stamp('9223372036854775807'), 9223372036854775807n);
  // The same for counters set with a timestamp.
  t.match(await encode('info:logins', 5, { timestamp: '77' }), { kind: 'counter-set', timestamp: 77 });
  t.match(await encode('info:logins', 5, { timestamp: 77.9 }), { kind: 'counter-set', timestamp: 77 });
});

t.test('unknown families and undeclared group columns are RG_ERR_UNKNOWN_COLUMN; map families take any qualifier', async (t) => {
  await t.rejects(encode('nonfamily:noncolumn', 'x'), { code: 'RG_ERR_UNKNOWN_COLUMN', message: 'Specified column does not exist: nonfamily:noncolumn' });
  await t.rejects(encode('info:nope', 'x'), { code: 'RG_ERR_UNKNOWN_COLUMN', message: 'Specified column does not exist: info:nope' });
  t.same(await stored('strings:apple iphone', 'iphone'), ['"iphone"', 0]);
  t.same(await stored('strings:a:b', 'c'), ['"c"', 0], 'a map key may contain ":"');
});

t.test('longs are exact to 64 bits; ints and longs out of range are RG_ERR_BAD_VALUE', async (t) => {
  const body = parseExactJson('{"v": 9223372036854775807, "w": -9223372036854775808}', 'body') as Record<string, JsonValue>;
  t.same(await stored('info:big', body.v), ['9223372036854775807', 3]);
  t.same(await stored('info:big', body.w), ['-9223372036854775808', 3]);
  t.same(await stored('info:big', 1000), ['1000', 3]);
  await t.rejects(encode('info:big', 9223372036854775808n), {
    code: 'RG_ERR_BAD_VALUE',
    message: 'value of column info:big does not match its writer schema "long": expected long, got 9223372036854775808',
  });
  await t.rejects(encode('info:big', 1.5), { code: 'RG_ERR_BAD_VALUE', message: /expected long, got 1.5/ });
  t.same(await stored('info:age', -2147483648), ['-2147483648', 2]);
  await t.rejects(encode('info:age', 2147483648), { code: 'RG_ERR_BAD_VALUE', message: /writer schema "int": expected int, got 2147483648$/ });
});

t.test('float and double store the shortest exact text; non-numbers and float overflow are refused', async (t) => {
  t.same(await stored('info:ratio', 0.1), ['0.1', 4]);
  t.same(await stored('info:ratio', 4), ['4', 4]);
  t.same(await stored('info:ratio', 16777217), ['16777216', 4], 'rounded to float precision');
  t.same(await stored('info:score', 0.1), ['0.1', 5]);
  t.same(await stored('info:score', 1e300), ['1e+300', 5]);
  await t.rejects(encode('info:ratio', 1e39), { code: 'RG_ERR_BAD_VALUE', message: /expected float, got 1e\+39/ });
  await t.rejects(encode('info:score', 'NaN'), { code: 'RG_ERR_BAD_VALUE', message: /expected double, got "NaN"/ });
});

t.test("regression: a number beyond a double's range is named in the message, not printed as null", async (t) => {
  const body = parseExactJson('{"v": 1e400, "w": -1e999}', 'body') as Record<string, JsonValue>;
  await t.rejects(encode('info:score', body.v!), {
    code: 'RG_ERR_BAD_VALUE',
    message: `value of column info:score does not match its writer schema "double": expected double, got a number beyond a double's range (Infinity)`,
  });
  await t.rejects(encode('info:big', body.w!), { code: 'RG_ERR_BAD_VALUE', message: /expected long, got a number beyond a double's range \(-Infinity\)$/ });
  await t.rejects(encode('info:name', 'x', { timestamp: body.v! }), {
    code: 'RG_ERR_BAD_TIMESTAMP',
    message: /got a number beyond a double's range \(Infinity\)$/,
  });
});

t.test('boolean and null schemas', async (t) => {
  t.same(await stored('info:flag', false), ['false', 6]);
  t.same(await stored('info:nothing', null), ['null', 7]);
  await t.rejects(encode('info:flag', 'true'), { code: 'RG_ERR_BAD_VALUE', message: /expected boolean, got "true"/ });
  await t.rejects(encode('info:nothing', 0), { code: 'RG_ERR_BAD_VALUE', message: /expected null, got 0/ });
});

t.test('a string schema takes only JSON strings (the original stored other JSON as its text)', async (t) => {
  await t.rejects(encode('info:name', 123), {
    code: 'RG_ERR_BAD_VALUE',
    message: 'value of column info:name does not match its writer schema "string": expected string, got 123',
  });
  await t.rejects(encode('info:name', { a: 1 }), { code: 'RG_ERR_BAD_VALUE', message: /expected string, got \{"a":1\}/ });
});

t.test('bytes are ISO-8859-1 strings (Avro JSON); RAW_BYTES columns use the bytes schema', async (t) => {
  const [json, id] = await stored('info:blob', '\u0000A\u00ff');
  t.equal(id, 1);
  t.equal(JSON.parse(json), '\u0000A\u00ff');
  t.same(await stored('info:raw', 'abc'), ['"abc"', 1]);
  await t.rejects(encode('info:blob', '\u0100'), { code: 'RG_ERR_BAD_VALUE', message: /expected bytes, got "\u0100"/ });
  await t.rejects(encode('info:blob', [1, 2]), { code: 'RG_ERR_BAD_VALUE', message: /expected bytes/ });
});

t.test('a top-level union column takes the bare or the wrapped value and stores the bare one', async (t) => {
  const schemas = new MemorySchemaTable();
  t.same(await stored('info:union', 'helloworld', { schemas }), ['"helloworld"', 8]);
  t.same(await stored('info:union', { string: 'hi' }, { schemas }), ['"hi"', 8]);
  t.same(await stored('info:union', null, { schemas }), ['null', 8]);
  t.equal(await schemas.schemaOf(8), '["string","null"]');
  await t.rejects(encode('info:union', { string: 5 }), { code: 'RG_ERR_BAD_VALUE' }, 'a wrapped value must match its branch');
  await t.rejects(encode('info:union', 5), {
    code: 'RG_ERR_BAD_VALUE',
    message:
      'value of column info:union does not match its writer schema ["string","null"]: expected a value of one of the branches of union [string, null], got 5',
  });
});

t.test('records: nested unions wrapped, defaults filled, unknown and missing fields refused with their path', async (t) => {
  const value = { id: { long: 1 }, name: { string: 'Team Name' }, barracks_status: { long: 1234 } };
  const [json, id] = await stored('info:team', value);
  t.equal(json, '{"id":{"long":1},"name":{"string":"Team Name"},"barracks_status":{"long":1234}}');
  t.equal(id, 8);
  t.equal((await stored('info:team', { id: null, name: null }))[0], '{"id":null,"name":null,"barracks_status":null}', 'a left-out field takes its default');
  t.equal(
    (await stored('info:team', { id: { long: 9223372036854775807n }, name: null }))[0],
    '{"id":{"long":9223372036854775807},"name":null,"barracks_status":null}',
  );
  await t.rejects(encode('info:team', { id: 1, name: null }), {
    code: 'RG_ERR_BAD_VALUE',
    message: /: at \.id: expected union \[null, long\] as null or \{"<branch>": value\}, got 1$/,
  });
  await t.rejects(encode('info:team', { id: { long: 'x' }, name: null }), { code: 'RG_ERR_BAD_VALUE', message: /at \.id\.long: expected long, got "x"$/ });
  await t.rejects(encode('info:team', { name: null }), { code: 'RG_ERR_BAD_VALUE', message: /at \.id: expected union \[null, long\], got nothing$/ });
  await t.rejects(encode('info:team', { id: null, name: null, color: 'red' }), {
    code: 'RG_ERR_BAD_VALUE',
    message: /expected record org\.kiji\.rest\.sample_avro\.Team without a field named "color", got/,
  });
  await t.rejects(encode('info:team', [1]), { code: 'RG_ERR_BAD_VALUE', message: /expected record org\.kiji\.rest\.sample_avro\.Team, got \[1\]$/ });
});

t.test('a nested union branch of a named type may be given by its short name when unambiguous', async (t) => {
  const col = handLayout('u', {
    f: { columns: { c: inline({ type: 'array', items: ['null', { type: 'record', name: 'a.b.P', fields: [{ name: 'x', type: 'int' }] }] }) } },
  });
  const cell = await encodeCell({ ...args('f:c', [{ P: { x: 1 } }, { 'a.b.P': { x: 2 } }, null]), layout: col });
  t.match(cell, { json: '[{"a.b.P":{"x":1}},{"a.b.P":{"x":2}},null]' }, 'stored with the full name');
  await t.rejects(encodeCell({ ...args('f:c', [{ Q: { x: 1 } }]), layout: col }), {
    code: 'RG_ERR_BAD_VALUE',
    message: /at \[0\]: expected union \[null, a\.b\.P\]/,
  });
});

t.test('an invalid INLINE schema in the layout is RG_ERR_BAD_LAYOUT naming the column', async (t) => {
  const bad = handLayout('b', { f: { columns: { c: inline('"nosuchtype"') } } });
  await t.rejects(encodeCell({ ...args('f:c', 1), layout: bad }), {
    code: 'RG_ERR_BAD_LAYOUT',
    message: 'the layout schema of column f:c is invalid: invalid Avro schema "nosuchtype": undefined type name: nosuchtype',
  });
});

t.test('enums, arrays, maps and fixed', async (t) => {
  t.equal((await stored('info:color', 'GREEN'))[0], '"GREEN"');
  await t.rejects(encode('info:color', 'PINK'), { code: 'RG_ERR_BAD_VALUE', message: /expected enum Color \(one of RED, GREEN\), got "PINK"/ });
  t.equal((await stored('info:tags', ['a', 'b']))[0], '["a","b"]');
  await t.rejects(encode('info:tags', ['a', 2]), { code: 'RG_ERR_BAD_VALUE', message: /at \[1\]: expected string, got 2$/ });
  t.equal((await stored('info:attrs', { x: 1, y: 9223372036854775807n }))[0], '{"x":1,"y":9223372036854775807}');
  await t.rejects(encode('info:attrs', { x: 'no' }), { code: 'RG_ERR_BAD_VALUE', message: /at \["x"\]: expected long, got "no"$/ });
  const proto = parseExactJson('{"__proto__": 5}', 'v');
  t.equal((await stored('info:attrs', proto))[0], '{"__proto__":5}', 'a "__proto__" map key is kept as data');
  t.equal((await stored('info:hash', '\u0001\u0002\u00fe\u00ff'))[0], JSON.stringify('\u0001\u0002\u00fe\u00ff'));
  await t.rejects(encode('info:hash', 'abc'), { code: 'RG_ERR_BAD_VALUE', message: /expected fixed Hash \(4 bytes\), got "abc"/ });
});

t.test('writer_schema as an id, a JSON schema, a bare name or escaped schema text', async (t) => {
  t.same(await stored('info:name', 'x', { writerSchema: 0 }), ['"x"', 0]);
  t.same(await stored('info:name', 'x', { writerSchema: { type: 'string' } }), ['"x"', 0]);
  t.same(await stored('info:name', 'x', { writerSchema: 'string' }), ['"x"', 0]);
  t.same(await stored('info:name', 'x', { writerSchema: '"string"' }), ['"x"', 0]);
  t.same(await stored('info:name', 'x', { writerSchema: null }), ['"x"', 0], 'null means the layout schema');
  t.same(await stored('info:team', { id: null, name: null }, { writerSchema: JSON.stringify(TEAM) }), ['{"id":null,"name":null,"barracks_status":null}', 8]);
});

t.test('bad writer_schema: unknown id, non-integer number, boolean, invalid schema', async (t) => {
  await t.rejects(encode('info:name', 'x', { writerSchema: 99 }), {
    code: 'RG_ERR_UNKNOWN_SCHEMA_ID',
    message: 'writer_schema 99 of column info:name is not in the schema table',
  });
  await t.rejects(encode('info:name', 'x', { writerSchema: -1 }), { code: 'RG_ERR_UNKNOWN_SCHEMA_ID' });
  await t.rejects(encode('info:name', 'x', { writerSchema: 2n ** 70n }), {
    code: 'RG_ERR_UNKNOWN_SCHEMA_ID',
    message: /writer_schema 1180591620717411303424 /,
  });
  await t.rejects(encode('info:name', 'x', { writerSchema: 1.5 }), {
    code: 'RG_ERR_BAD_SCHEMA',
    message: 'writer_schema of column info:name must be a schema id or an Avro schema, got 1.5',
  });
  await t.rejects(encode('info:name', 'x', { writerSchema: true }), { code: 'RG_ERR_BAD_SCHEMA', message: /got true$/ });
  await t.rejects(encode('info:name', 'x', { writerSchema: 'strng' }), {
    code: 'RG_ERR_BAD_SCHEMA',
    message: 'writer_schema of column info:name: invalid Avro schema strng: undefined type name: strng',
  });
});

t.test('writer schema resolved to the column schema: promotions, defaults, union branches', async (t) => {
  t.same(await stored('info:big', 5, { writerSchema: 'int' }), ['5', 3], 'int written to a long column');
  t.same(await stored('info:score', 5, { writerSchema: 'int' }), ['5', 5], 'int to double');
  t.same(await stored('info:score', 9007199254740993n, { writerSchema: 'long' }), ['9007199254740992', 5], 'long to double rounds');
  t.same(await stored('info:ratio', 0.1, { writerSchema: 'float' }), ['0.1', 4]);
  t.same(await stored('info:blob', 'abc', { writerSchema: 'string' }), ['"abc"', 1], 'string to bytes');
  t.same(await stored('info:name', 'abc', { writerSchema: 'bytes' }), ['"abc"', 0], 'bytes to string');
  const schemas = new MemorySchemaTable();
  t.same(await stored('info:v', { a: 7 }, { writerSchema: V1, schemas }), ['{"a":7,"b":"dflt"}', 8], 'old record read as the default reader');
  t.equal(await schemas.schemaOf(8), canonicalSchemaJson(V2), 'the id is that of the reader schema the json is in');
  t.same(await stored('info:big', { int: 5 }, { writerSchema: ['null', 'int'] }), ['5', 3], 'only the written union branch must resolve');
  t.same(await stored('info:union', 'x', { writerSchema: 'string' }), ['"x"', 8], 'a plain writer read as a union column');
});

t.test('incompatible writer schemas are RG_ERR_BAD_SCHEMA naming both schemas and the column', async (t) => {
  await t.rejects(encode('info:big', 'x', { writerSchema: 'string' }), {
    code: 'RG_ERR_BAD_SCHEMA',
    message: 'writer schema "string" cannot be read with the schema "long" of column info:big: cannot read "string" as "long"',
  });
  await t.rejects(encode('info:big', null, { writerSchema: ['null', 'int'] }), { code: 'RG_ERR_BAD_SCHEMA', message: /cannot read "null" as "long"/ });
  await t.rejects(encode('info:v', {}, { writerSchema: { type: 'record', name: 'Other', fields: [] } }), {
    code: 'RG_ERR_BAD_SCHEMA',
    message: /no alias found for Other/,
  });
  await t.rejects(encode('info:v', {}, { writerSchema: { type: 'record', name: 'V', fields: [] } }), {
    code: 'RG_ERR_BAD_SCHEMA',
    message: /of column info:v/,
  });
  await t.rejects(encode('info:color', 'RED', { writerSchema: { type: 'enum', name: 'Color', symbols: ['RED', 'BLUE'] } }), { code: 'RG_ERR_BAD_SCHEMA' });
});

t.test('revision 1 ignores writer_schema: values are always in the layout schema', async (t) => {
  t.same(await stored('info:name', 'hello', { writerSchema: 'int', writerSchemas: false }), ['"hello"', 0]);
  await t.rejects(encode('info:name', 5, { writerSchema: 'int', writerSchemas: false }), { code: 'RG_ERR_BAD_VALUE' });
  t.same(await stored('info:big', 5, { writerSchema: 'int', writerSchemas: true }), ['5', 3]);
});

t.test('AVRO columns: default reader by json or uid, no default reader stores the writer schema', async (t) => {
  t.same(await stored('info:avro_uid', 12), ['12', 3]);
  t.same(await stored('info:v', { a: 1 }), ['{"a":1,"b":"dflt"}', 8]);
  await t.rejects(encode('info:free', 'x'), {
    code: 'RG_ERR_BAD_SCHEMA',
    message: 'column info:free (AVRO) has no layout schema to write with: give writer_schema',
  });
  t.same(await stored('info:free', 'x', { writerSchema: 'string' }), ['"x"', 0]);
  const bad = handLayout('b', { f: { columns: { c: avroSchema({ defaultReader: { uid: 77 } }) } } });
  await t.rejects(encodeCell({ ...args('f:c', 1), layout: bad }), {
    code: 'RG_ERR_BAD_LAYOUT',
    message: 'the layout of column f:c names schema uid 77, which is not in the schema table',
  });
});

t.test('STRICT AVRO columns accept only listed writers (union writers flattened)', async (t) => {
  t.same(await stored('info:strict', 5, { writerSchema: 'int' }), ['5', 3]);
  t.same(await stored('info:strict', 5, { writerSchema: 'long' }), ['5', 3], 'a branch of a listed union');
  t.same(await stored('info:strict', 5, { writerSchema: ['null', 'long'] }), ['5', 3]);
  await t.rejects(encode('info:strict', 5, { writerSchema: 'double' }), {
    code: 'RG_ERR_BAD_SCHEMA',
    message: 'writer schema "double" is not among the writers of STRICT column info:strict',
  });
});

t.test('CLASS columns need a writer_schema; PROTOBUF columns cannot be written', async (t) => {
  await t.rejects(encode('info:klass', 'x'), { code: 'RG_ERR_BAD_SCHEMA', message: /column info:klass \(CLASS\) has no layout schema/ });
  t.same(await stored('info:klass', 'x', { writerSchema: 'string' }), ['"x"', 0]);
  await t.rejects(encode('info:proto', 'x'), {
    code: 'RG_ERR_BAD_SCHEMA',
    message: 'column info:proto has cell type PROTOBUF, which cannot be written through this gateway',
  });
});

t.test('counters: integers set, {"incr": n} increments', async (t) => {
  t.same(await encode('info:logins', 0, { timestamp: 0, writerSchema: 3 }), {
    kind: 'counter-set',
    family: 'info',
    qualifier: 'logins',
    value: 0n,
    timestamp: 0,
  });
  t.same(await encode('info:logins', 9223372036854775807n), { kind: 'counter-set', family: 'info', qualifier: 'logins', value: 9223372036854775807n });
  t.same(await encode('counters:any', { incr: -122 }), { kind: 'counter-increment', family: 'counters', qualifier: 'any', delta: -122n });
  t.equal(COUNTER_SCHEMA_ID, 3);
  t.equal(renderCounter(-9223372036854775808n), '-9223372036854775808');
});

t.test('a counter\'s writer_schema is "long" (id 3, as reads serve it), or absent; any other is refused', async (t) => {
  for (const writerSchema of [3, 'long', '"long"', { type: 'long' }, null] as JsonValue[]) {
    t.same(
      await encode('counters:any', 7, { writerSchema }),
      { kind: 'counter-set', family: 'counters', qualifier: 'any', value: 7n },
      JSON.stringify(writerSchema),
    );
    t.same(await encode('counters:any', { incr: 1 }, { writerSchema }), { kind: 'counter-increment', family: 'counters', qualifier: 'any', delta: 1n });
  }
  for (const writerSchema of ['string', 'int', 0, 2, 99, 'garbage', ['long', 'null'], { type: 'record' }, true, 3.5] as JsonValue[]) {
    await t.rejects(
      encode('counters:any', 7, { writerSchema }),
      {
        code: 'RG_ERR_BAD_SCHEMA',
        message: /^writer_schema of counter column counters:any must be "long" \(schema id 3\) or absent: a counter is a 64-bit integer, got /,
      },
      JSON.stringify(writerSchema),
    );
  }
  // Revision 1 has no writer_schema (row-input refuses one there); PUT's schema.<column> comes as revision 2.
  t.same(await encode('counters:any', 7, { writerSchema: 'string', writerSchemas: false }), {
    kind: 'counter-set',
    family: 'counters',
    qualifier: 'any',
    value: 7n,
  });
});

t.test('counter errors are RG_ERR_BAD_COUNTER naming the column and value', async (t) => {
  await t.rejects(encode('info:logins', { incr: 5 }, { timestamp: 10 }), {
    code: 'RG_ERR_BAD_COUNTER',
    message: 'counter increment of column info:logins cannot carry a timestamp (got 10)',
  });
  t.equal((await encode('info:logins', { incr: 5 }, { timestamp: null })).kind, 'counter-increment');
  for (const incr of [{ incr: 'x' }, { incr: 1.5 }, { incr: 1, x: 2 }, {}, { incr: 9223372036854775808n }] as JsonValue[]) {
    await t.rejects(encode('info:logins', incr), {
      code: 'RG_ERR_BAD_COUNTER',
      message: /^counter increment of column info:logins must be \{"incr": <64-bit integer>\}, got /,
    });
  }
  for (const v of ['5', 5.5, -9223372036854775809n, null, [1], true] as JsonValue[]) {
    await t.rejects(encode('info:logins', v), {
      code: 'RG_ERR_BAD_COUNTER',
      message: /^counter value of column info:logins must be a 64-bit integer or \{"incr": n\}, got /,
    });
  }
  await t.rejects(encode('info:logins', 5, { timestamp: -1 }), { code: 'RG_ERR_BAD_TIMESTAMP' });
});

// ---------------------------------------------------------------- randomized round trips

let seed = 20240601;
function rnd(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
const PRIMS = ['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'] as const;

function randomSchema(depth: number, names: { n: number }): JsonValue {
  const kinds = depth > 2 ? ['prim'] : ['prim', 'prim', 'record', 'enum', 'fixed', 'array', 'map', 'union'];
  switch (pick(kinds)) {
    case 'record': {
      const fields = Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, i) => ({ name: `f${i}`, type: randomSchema(depth + 1, names) }));
      return { type: 'record', name: `R${names.n++}`, namespace: pick(['', 'ns.x']), fields };
    }
    case 'enum':
      return { type: 'enum', name: `E${names.n++}`, symbols: ['A', 'B', 'C'] };
    case 'fixed':
      return { type: 'fixed', name: `F${names.n++}`, size: 1 + Math.floor(rnd() * 4) };
    case 'array':
      return { type: 'array', items: randomSchema(depth + 1, names) };
    case 'map':
      return { type: 'map', values: randomSchema(depth + 1, names) };
    case 'union': {
      const prims = [...PRIMS].sort(() => rnd() - 0.5).slice(0, 1 + Math.floor(rnd() * 3));
      const branches: JsonValue[] = [...prims];
      if (rnd() < 0.5) branches.push({ type: 'record', name: `U${names.n++}`, fields: [{ name: 'x', type: pick(PRIMS) }] });
      if (rnd() < 0.3) branches.push({ type: 'array', items: randomSchema(depth + 1, names) });
      return branches;
    }
    default:
      return pick(PRIMS);
  }
}

t.test('random values of random schemas: encode -> parse json back -> equal (and same Avro binary)', async (t) => {
  const schemas = new MemorySchemaTable();
  let checked = 0;
  for (let i = 0; i < 150; i++) {
    const canonical = canonicalSchemaJson(randomSchema(0, { n: 0 }));
    const type = avroTypeOf(canonical);
    const col = handLayout('r', { f: { columns: { c: inline(canonical) } } });
    for (let j = 0; j < 5; j++) {
      // Through binary once so floats are float32 values, as a stored value would be.
      const value = type.fromBuffer(type.toBuffer(type.random()));
      const posted = parseExactJson(avroToJson(type, value), 'posted');
      const cell = await encodeCell({ layout: col, family: 'f', qualifier: 'c', value: posted, schemas, writerSchemas: true });
      if (cell.kind !== 'value') throw new Error('value cell expected');
      const back = parseExactJson(cell.json, 'stored');
      t.same(back, parseExactJson(avroToJson(type, value, true), 'expected'), canonical);
      // Independent check through avsc's binary encoding (bare top-level unions are ambiguous).
      if (type.typeName !== 'union:wrapped') {
        t.equal(type.toBuffer(avroFromJson(type, back, true)).toString('hex'), type.toBuffer(value).toString('hex'), canonical);
      }
      t.equal(await schemas.schemaOf(cell.schemaId), canonical);
      checked++;
    }
    if (!t.passing()) break;
  }
  t.equal(checked, 750);
});

t.test('random ints written to long, float and double columns resolve exactly', async (t) => {
  for (let i = 0; i < 200; i++) {
    const n = Math.floor((rnd() - 0.5) * 2 ** 32) | 0;
    t.same(await stored('info:big', n, { writerSchema: 'int' }), [String(n), 3]);
    t.same(await stored('info:score', n, { writerSchema: 'int' }), [String(n), 5]);
    // The shortest text that reads back as the same float32.
    t.equal(Math.fround(Number((await stored('info:ratio', n, { writerSchema: 'int' }))[0])), Math.fround(n));
    if (!t.passing()) break;
  }
});
