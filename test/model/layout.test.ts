import t from 'tap';
import { readFileSync } from 'node:fs';
import { isRowgateError } from '../../lib/errors.js';
import { columnSchema, familyOf, parseLayout } from '../../lib/model/layout.js';
import { DEMO_LAYOUTS, USERS_LAYOUT_JSON } from '../../lib/model/demo-layouts.js';
import { FOREVER, type TableLayout } from '../../lib/model/types.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/layouts/${name}.json`, import.meta.url), 'utf8');

type Json = any;

const RKF2 = 'org.kiji.schema.avro.RowKeyFormat2';
const RKF1 = 'org.kiji.schema.avro.RowKeyFormat';

function rejection(input: string | object): string {
  try {
    parseLayout(input);
  } catch (e) {
    if (isRowgateError(e) && e.code === 'RG_ERR_BAD_LAYOUT') return e.message;
    throw e;
  }
  throw new Error('layout was accepted');
}

/** A small valid layout, rebuilt for each use so tests can change it. */
function minimal(keys: Json, version = 'layout-1.5.0'): Json {
  return {
    name: 't',
    keys_format: keys,
    locality_groups: [{ name: 'default', in_memory: false, max_versions: 1, ttl_seconds: FOREVER, compression_type: 'NONE', families: [] }],
    version,
  };
}

t.test('example A parses with the documented effective values', async (t) => {
  const layout = parseLayout(fixture('example-a'));
  t.equal(layout.name, 'rkf2_formatted');
  t.same(layout.keyFormat, {
    encoding: 'FORMATTED',
    hashSize: 2,
    suppressMaterialization: false,
    rangeScanStartIndex: 1,
    nullableStartIndex: 1,
    components: [
      { name: 'dummy', type: 'STRING' },
      { name: 'str1', type: 'STRING' },
      { name: 'str2', type: 'STRING' },
      { name: 'anint', type: 'INTEGER' },
      { name: 'along', type: 'LONG' },
    ],
  });
  const lg = layout.localityGroups[0]!;
  t.match(lg, { id: 1, name: 'default', inMemory: false, maxVersions: 3, ttlSeconds: FOREVER });
  const family = familyOf(layout, 'family')!;
  t.match(family, { id: 1, localityGroup: 'default', maxVersions: 3, ttlSeconds: FOREVER });
  t.same(family.columns[0], {
    id: 1,
    name: 'column',
    schema: { type: 'INLINE', storage: 'HASH', value: '"string"', avroValidationPolicy: 'SCHEMA_1_0', readers: [], writers: [] },
  });
  const d = layout.desc as Json;
  t.same(d.keys_format[RKF2].salt, { 'org.kiji.schema.avro.HashSpec': { hash_type: 'MD5', hash_size: 2, suppress_key_materialization: false } });
  t.equal(d.keys_format[RKF2].range_scan_start_index, 1);
  t.equal(d.keys_format[RKF2].nullable_start_index, 1);
  t.equal(d.column_name_translator, 'SHORT');
  t.same(d.layout_id, { string: '1' });
  t.equal(d.reference_layout, null);
  t.equal(d.version, 'layout-1.1.0');
  t.same(d.locality_groups[0].families[0].columns[0].column_schema.value, { string: '"string"' });
});

t.test('example C parses: RAW keys through a wrapped RowKeyFormat2, counter column and counter map family', async (t) => {
  const layout = parseLayout(fixture('example-c'));
  t.same(layout.keyFormat, { encoding: 'RAW' });
  t.same(Object.keys((layout.desc as Json).keys_format), [RKF2]);
  const info = familyOf(layout, 'info')!;
  t.equal(info.id, 1);
  t.same(info.columns.map((c) => [c.id, c.name]), [[1, 'name'], [2, 'visits']]);
  t.match(info.columns[1]!.schema, { type: 'COUNTER', storage: 'FINAL' });
  const experiments = familyOf(layout, 'experiments')!;
  t.equal(experiments.id, 2);
  t.same(experiments.columns, []);
  t.match(experiments.mapSchema, { type: 'COUNTER', storage: 'FINAL' });
  t.equal(experiments.maxVersions, FOREVER);
  const d = layout.desc as Json;
  t.equal(d.locality_groups[0].description, 'Default data stored forever on disk.');
  t.match(d.locality_groups[0].families[1].map_schema, { 'org.kiji.schema.avro.CellSchema': { type: 'COUNTER', storage: 'FINAL' } });
});

t.test('example B is rejected for its CLASS columns with a message naming the column', async (t) => {
  const msg = rejection(fixture('example-b'));
  t.match(msg, /^locality_groups\[0\]\.families\[0\]\.columns\[4\]\.column_schema\.type: CLASS cells are not supported/);
  t.match(msg, /cannot load Java classes \(org\.kiji\.schema\.avro\.Node\)/);
});

t.test('example B without CLASS columns parses: AVRO with default_reader, omitted salt, map family', async (t) => {
  const layout = parseLayout(fixture('example-b-no-class'));
  t.match(layout.keyFormat, { encoding: 'FORMATTED', hashSize: 2, components: [{ name: 'row', type: 'STRING' }] });
  t.same(columnSchema(layout, 'family', 'qual0'), {
    type: 'AVRO',
    storage: 'UID',
    avroValidationPolicy: 'DEVELOPER',
    defaultReader: { json: '"string"' },
    readers: [],
    writers: [],
  });
  t.match(columnSchema(layout, 'family', 'qual3'), { type: 'INLINE', value: '"int"' });
  t.match(columnSchema(layout, 'map', 'anything'), { type: 'INLINE', value: '"int"', storage: 'HASH' });
  t.same(familyOf(layout, 'family')!.columns.map((c) => c.id), [1, 2, 3, 4]);
  t.equal(familyOf(layout, 'map')!.id, 2);
  // Kiji keeps AVRO schema lists as arrays once normalized.
  const qual0 = (layout.desc as Json).locality_groups[0].families[0].columns[0].column_schema;
  t.same(qual0.readers, { array: [] });
  t.same(qual0.default_reader, { 'org.kiji.schema.avro.AvroSchema': { uid: null, json: { string: '"string"' } } });
});

t.test('salt default subtlety: omitted salt is 2 bytes, a given salt record defaults to 16', async (t) => {
  const comps = [{ name: 'k', type: 'STRING' }];
  const hashSize = (keys: Json): unknown => (parseLayout(minimal(keys)).keyFormat as Json).hashSize;
  t.equal(hashSize({ encoding: 'FORMATTED', components: comps }), 2);
  t.equal(hashSize({ encoding: 'FORMATTED', salt: {}, components: comps }), 16);
  t.equal(hashSize({ encoding: 'FORMATTED', salt: { hash_type: 'MD5' }, components: comps }), 16);
  t.equal(hashSize({ encoding: 'FORMATTED', salt: { 'org.kiji.schema.avro.HashSpec': {} }, components: comps }), 16);
  t.equal(hashSize({ encoding: 'FORMATTED', salt: { hash_size: 4 }, components: comps }), 4);
});

t.test('RowKeyFormat v1 RAW, HASH and HASH_PREFIX compile to the right key formats', async (t) => {
  const raw = parseLayout(minimal({ encoding: 'RAW' }, 'layout-1.0.0'));
  t.same(raw.keyFormat, { encoding: 'RAW' });
  t.same((raw.desc as Json).keys_format, { [RKF1]: { encoding: 'RAW', hash_type: null, hash_size: 0 } });
  const hash = parseLayout(minimal({ encoding: 'HASH', hash_type: 'MD5', hash_size: 16 }, 'layout-1.0.0'));
  t.same(hash.keyFormat, { encoding: 'HASH' });
  t.same((hash.desc as Json).keys_format, { [RKF1]: { encoding: 'HASH', hash_type: { 'org.kiji.schema.avro.HashType': 'MD5' }, hash_size: 16 } });
  const prefix = parseLayout(minimal({ encoding: 'HASH_PREFIX', hash_type: 'MD5', hash_size: 2 }, 'layout-1.0.0'));
  t.same(prefix.keyFormat, { encoding: 'HASH_PREFIX', hashSize: 2 });
});

t.test('untagged {encoding: "RAW"} resolves to RowKeyFormat v1, not RowKeyFormat2', async (t) => {
  const layout = parseLayout(minimal({ encoding: 'RAW' }));
  t.same(Object.keys((layout.desc as Json).keys_format), [RKF1]);
  const v2 = parseLayout(minimal({ [RKF2]: { encoding: 'RAW' } }));
  t.same(Object.keys((v2.desc as Json).keys_format), [RKF2]);
  t.same(v2.keyFormat, { encoding: 'RAW' });
});

t.test('kiji-1.0 is normalized to layout-1.0.0; other versions keep their text', async (t) => {
  t.equal((parseLayout(minimal({ encoding: 'RAW' }, 'kiji-1.0')).desc as Json).version, 'layout-1.0.0');
  t.equal((parseLayout(minimal({ encoding: 'RAW' }, 'kiji-1.0.0')).desc as Json).version, 'layout-1.0.0');
  t.equal((parseLayout(minimal({ encoding: 'RAW' }, 'layout-1.1')).desc as Json).version, 'layout-1.1');
  t.match(rejection(minimal({ encoding: 'RAW' }, 'kiji-1.1')), /^version: "kiji-1\.1" is not supported: .*only kiji-1\.0 is accepted.*layout-1\.5\.0/);
});

t.test('ids: from 1 in declaration order per scope, skipping explicit ids', async (t) => {
  const col = (name: string, id?: number): Json => ({ name, ...(id ? { id } : {}), column_schema: { type: 'INLINE', value: '"int"' } });
  const lg = (name: string, families: Json[], id?: number): Json => ({
    name, ...(id ? { id } : {}), in_memory: false, max_versions: 1, ttl_seconds: 1, compression_type: 'NONE', families,
  });
  const d = minimal({ encoding: 'RAW' });
  d.locality_groups = [
    lg('a', [{ name: 'f1', columns: [col('c1'), col('c2', 1), col('c3')] }, { name: 'f2', id: 1, columns: [] }, { name: 'f3', columns: [] }]),
    lg('b', [{ name: 'g1', columns: [col('x')] }], 1),
    lg('c', []),
  ];
  const layout = parseLayout(d);
  t.same(layout.localityGroups.map((l) => [l.name, l.id]), [['a', 2], ['b', 1], ['c', 3]]);
  t.same(layout.localityGroups[0]!.families.map((f) => [f.name, f.id]), [['f1', 2], ['f2', 1], ['f3', 3]]);
  t.same(familyOf(layout, 'f1')!.columns.map((c) => [c.name, c.id]), [['c1', 2], ['c2', 1], ['c3', 3]]);
  t.equal(familyOf(layout, 'g1')!.id, 1, 'family ids restart in each locality group');
  t.equal(familyOf(layout, 'g1')!.columns[0]!.id, 1, 'column ids restart in each family');
  const desc = layout.desc as Json;
  t.same(desc.locality_groups.map((l: Json) => l.id), [2, 1, 3]);
});

t.test('layout_id is "1" when null and kept when given', async (t) => {
  t.same((parseLayout(minimal({ encoding: 'RAW' })).desc as Json).layout_id, { string: '1' });
  t.same((parseLayout({ ...minimal({ encoding: 'RAW' }), layout_id: '7' }).desc as Json).layout_id, { string: '7' });
});

t.test('lenient syntax: comments, single quotes, unquoted names, trailing commas', async (t) => {
  const text = `
    // line comment
    /* block comment */
    {
      name: 'lenient',
      'keys_format': {encoding: "FORMATTED", components: [{name: 'k', type: 'LONG'},]},
      locality_groups: [{name: 'default', in_memory: false, max_versions: 1, ttl_seconds: 60, compression_type: 'NONE',
        families: [{name: 'f', columns: [{name: 'c', column_schema: {type: 'INLINE', value: '"string"'}}]}]}],
      version: 'layout-1.1.0',
    }`;
  const layout = parseLayout(text);
  t.equal(layout.name, 'lenient');
  t.match(columnSchema(layout, 'f', 'c'), { value: '"string"' });
  t.match(rejection('{name: "x",'), /^layout: is not valid JSON/);
});

t.test('tagged and untagged unions give the same layout', async (t) => {
  const untagged = {
    name: 't',
    max_filesize: 1048576,
    memstore_flushsize: 65536,
    keys_format: { encoding: 'FORMATTED', salt: { hash_size: 3 }, components: [{ name: 'k', type: 'STRING' }] },
    locality_groups: [{
      name: 'default', in_memory: true, max_versions: 2, ttl_seconds: 100, block_size: 65536, bloom_type: 'ROW', compression_type: 'SNAPPY',
      families: [
        { name: 'm', map_schema: { type: 'INLINE', value: '"long"' } },
        { name: 'g', renamed_from: null, columns: [{ name: 'a', column_schema: { type: 'AVRO', default_reader: { json: '"int"' }, readers: [{ uid: 2 }] } }] },
      ],
    }],
    version: 'layout-1.3.0',
    layout_id: '3',
  };
  const tagged = {
    name: 't',
    max_filesize: { long: 1048576 },
    memstore_flushsize: { long: 65536 },
    keys_format: { [RKF2]: { encoding: 'FORMATTED', salt: { 'org.kiji.schema.avro.HashSpec': { hash_size: 3 } }, components: [{ name: 'k', type: 'STRING' }] } },
    locality_groups: [{
      name: 'default', in_memory: true, max_versions: 2, ttl_seconds: 100, block_size: { int: 65536 },
      bloom_type: { 'org.kiji.schema.avro.BloomType': 'ROW' }, compression_type: 'SNAPPY',
      families: [
        { name: 'm', map_schema: { 'org.kiji.schema.avro.CellSchema': { type: 'INLINE', value: { string: '"long"' } } } },
        {
          name: 'g', renamed_from: null,
          columns: [{
            name: 'a',
            column_schema: {
              type: 'AVRO',
              default_reader: { 'org.kiji.schema.avro.AvroSchema': { json: { string: '"int"' } } },
              readers: { array: [{ uid: { long: 2 } }] },
            },
          }],
        },
      ],
    }],
    version: 'layout-1.3.0',
    layout_id: { string: '3' },
  };
  const a = parseLayout(untagged);
  t.same(parseLayout(tagged), a);
  t.same(columnSchema(a, 'g', 'a')!.readers, [{ uid: 2 }]);
  const lg = (a.desc as Json).locality_groups[0];
  t.same(lg.block_size, { int: 65536 });
  t.same(lg.bloom_type, { 'org.kiji.schema.avro.BloomType': 'ROW' });
  t.same((a.desc as Json).max_filesize, { long: 1048576 });
});

t.test('an object input is not modified', async (t) => {
  const input = minimal({ encoding: 'FORMATTED', components: [{ name: 'k', type: 'STRING' }] });
  const before = structuredClone(input);
  parseLayout(input);
  t.same(input, before);
});

/** A layout using most optional features: v1 HASH keys, two LGs, aliases, translator, AVRO lists. */
const FULL: Json = {
  name: 'full',
  description: 'everything',
  max_filesize: 10737418240,
  keys_format: { encoding: 'HASH', hash_type: 'MD5', hash_size: 16 },
  locality_groups: [
    {
      name: 'default', aliases: ['dflt'], in_memory: false, max_versions: 3, ttl_seconds: 86400, block_size: 1024,
      bloom_type: 'ROWCOL', compression_type: 'GZ',
      families: [{
        name: 'info', aliases: ['i'],
        columns: [
          { name: 'name', aliases: ['n'], description: 'user name', column_schema: { type: 'INLINE', storage: 'UID', value: '"string"' } },
          { name: 'raw', column_schema: { type: 'RAW_BYTES' } },
          {
            name: 'avro',
            column_schema: { type: 'AVRO', avro_validation_policy: 'STRICT', readers: [{ uid: 2 }], writers: [{ uid: 2 }, { json: '"long"' }], written: [] },
          },
        ],
      }],
    },
    {
      name: 'inmem', in_memory: true, max_versions: 1, ttl_seconds: 60, compression_type: 'NONE',
      families: [{ name: 'purchases', map_schema: { type: 'INLINE', value: '{"type":"record","name":"P","fields":[{"name":"x","type":"long"}]}' } }],
    },
  ],
  column_name_translator: 'IDENTITY',
  version: 'layout-1.5.0',
};

t.test('round trip: parseLayout(layout.desc) yields an equal layout', async (t) => {
  const layouts: [string, TableLayout][] = [
    ['example A', parseLayout(fixture('example-a'))],
    ['example B without CLASS', parseLayout(fixture('example-b-no-class'))],
    ['example C', parseLayout(fixture('example-c'))],
    ['demo users', parseLayout(USERS_LAYOUT_JSON)],
    ['full-featured', parseLayout(FULL)],
    ['v1 RAW', parseLayout(minimal({ encoding: 'RAW' }, 'kiji-1.0'))],
  ];
  for (const [name, layout] of layouts) {
    t.same(parseLayout(layout.desc), layout, `${name}: object form`);
    t.same(parseLayout(JSON.stringify(layout.desc)), layout, `${name}: JSON text form`);
  }
});

t.test('desc fields follow the avdl record field order', async (t) => {
  const d = parseLayout(FULL).desc as Json;
  t.same(Object.keys(d), [
    'name', 'max_filesize', 'memstore_flushsize', 'description', 'keys_format', 'locality_groups',
    'column_name_translator', 'version', 'layout_id', 'reference_layout',
  ]);
  t.same(Object.keys(d.locality_groups[0]), [
    'id', 'name', 'aliases', 'enabled', 'description', 'in_memory', 'max_versions', 'ttl_seconds', 'block_size',
    'bloom_type', 'compression_type', 'families', 'delete', 'renamed_from',
  ]);
  t.same(Object.keys(d.locality_groups[0].families[0]), ['id', 'name', 'aliases', 'enabled', 'description', 'map_schema', 'columns', 'delete', 'renamed_from']);
  const col = d.locality_groups[0].families[0].columns[0];
  t.same(Object.keys(col), ['id', 'name', 'aliases', 'enabled', 'description', 'column_schema', 'delete', 'renamed_from']);
  t.same(Object.keys(col.column_schema), [
    'storage', 'type', 'value', 'avro_validation_policy', 'specific_reader_schema_class', 'default_reader',
    'readers', 'written', 'writers', 'protobuf_full_name', 'protobuf_class_name',
  ]);
  const v2 = parseLayout(fixture('example-a')).desc as Json;
  t.same(Object.keys(v2.keys_format[RKF2]), ['encoding', 'salt', 'range_scan_start_index', 'nullable_start_index', 'components']);
});

t.test('familyOf and columnSchema: map families, group columns, aliases, unknown names', async (t) => {
  const layout = parseLayout(FULL);
  t.equal(familyOf(layout, 'info')?.name, 'info');
  t.equal(familyOf(layout, 'i')?.name, 'info', 'family alias');
  t.equal(familyOf(layout, 'nope'), undefined);
  t.equal(familyOf(layout, 'dflt'), undefined, 'a locality group name is not a family');
  t.match(columnSchema(layout, 'info', 'name'), { type: 'INLINE', storage: 'UID', value: '"string"' });
  t.match(columnSchema(layout, 'i', 'n'), { value: '"string"' }, 'family and column aliases');
  t.match(columnSchema(layout, 'info', 'raw'), { type: 'RAW_BYTES', storage: 'HASH' });
  t.equal(columnSchema(layout, 'info', 'undeclared'), undefined);
  t.equal(columnSchema(layout, 'nope', 'name'), undefined);
  t.match(columnSchema(layout, 'purchases', 'any:thing'), { type: 'INLINE' });
  t.match(columnSchema(layout, 'purchases', ''), { type: 'INLINE' });
  t.same(columnSchema(layout, 'info', 'avro')!.writers, [{ uid: 2 }, { json: '"long"' }]);
  t.same(layout.localityGroups.map((lg) => lg.families.map((f) => f.localityGroup)), [['default'], ['inmem']]);
  t.match(familyOf(layout, 'purchases'), { maxVersions: 1, ttlSeconds: 60, localityGroup: 'inmem' });
});

t.test('demo users layout parses with typed columns, a record column and a counter map family', async (t) => {
  t.same(Object.keys(DEMO_LAYOUTS), ['users']);
  const layout = parseLayout(USERS_LAYOUT_JSON);
  t.equal(layout.name, 'users');
  t.same(layout.keyFormat, {
    encoding: 'FORMATTED', hashSize: 2, suppressMaterialization: false, rangeScanStartIndex: 1, nullableStartIndex: 1,
    components: [{ name: 'uid', type: 'LONG' }],
  });
  t.match(layout.localityGroups[0], { name: 'default', maxVersions: 5, ttlSeconds: FOREVER });
  t.same(familyOf(layout, 'info')!.columns.map((c) => c.name), ['name', 'email', 'age', 'score', 'tags', 'address']);
  t.match(columnSchema(layout, 'info', 'age'), { type: 'INLINE', value: '"int"' });
  t.match(columnSchema(layout, 'info', 'address')!.value, /"type": "record"/);
  t.match(columnSchema(layout, 'logins', 'example.com'), { type: 'COUNTER', storage: 'FINAL' });
});
