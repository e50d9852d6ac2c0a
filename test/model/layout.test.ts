import t from 'tap';
import { readFileSync } from 'node:fs';
import { isRowgateError } from '../../lib/errors.js';
import { columnSchema, familyOf, parseLayout } from '../../lib/model/layout/layout.js';
import { DEMO_LAYOUTS, USERS_LAYOUT_JSON } from '../../lib/model/layout/demo-layouts.js';
import { FOREVER, type RowKeyFormat, type TableLayout } from '../../lib/model/types.js';
import { prng, randomString } from './key-fixtures.js';
import { repoPath } from '../support/repo-root.js';

const fixture = (name: string): string => readFileSync(repoPath('test', 'fixtures', 'layouts', `${name}.json`), 'utf8');

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
  t.same(
    info.columns.map((c) => [c.id, c.name]),
    [
      [1, 'name'],
      [2, 'visits'],
    ],
  );
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
  t.same(
    familyOf(layout, 'family')!.columns.map((c) => c.id),
    [1, 2, 3, 4],
  );
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
    name,
    ...(id ? { id } : {}),
    in_memory: false,
    max_versions: 1,
    ttl_seconds: 1,
    compression_type: 'NONE',
    families,
  });
  const d = minimal({ encoding: 'RAW' });
  d.locality_groups = [
    lg('a', [
      { name: 'f1', columns: [col('c1'), col('c2', 1), col('c3')] },
      { name: 'f2', id: 1, columns: [] },
      { name: 'f3', columns: [] },
    ]),
    lg('b', [{ name: 'g1', columns: [col('x')] }], 1),
    lg('c', []),
  ];
  const layout = parseLayout(d);
  t.same(
    layout.localityGroups.map((l) => [l.name, l.id]),
    [
      ['a', 2],
      ['b', 1],
      ['c', 3],
    ],
  );
  t.same(
    layout.localityGroups[0]!.families.map((f) => [f.name, f.id]),
    [
      ['f1', 2],
      ['f2', 1],
      ['f3', 3],
    ],
  );
  t.same(
    familyOf(layout, 'f1')!.columns.map((c) => [c.name, c.id]),
    [
      ['c1', 2],
      ['c2', 1],
      ['c3', 3],
    ],
  );
  t.equal(familyOf(layout, 'g1')!.id, 1, 'family ids restart in each locality group');
  t.equal(familyOf(layout, 'g1')!.columns[0]!.id, 1, 'column ids restart in each family');
  const desc = layout.desc as Json;
  t.same(
    desc.locality_groups.map((l: Json) => l.id),
    [2, 1, 3],
  );
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
    locality_groups: [
      {
        name: 'default',
        in_memory: true,
        max_versions: 2,
        ttl_seconds: 100,
        block_size: 65536,
        bloom_type: 'ROW',
        compression_type: 'SNAPPY',
        families: [
          { name: 'm', map_schema: { type: 'INLINE', value: '"long"' } },
          {
            name: 'g',
            renamed_from: null,
            columns: [{ name: 'a', column_schema: { type: 'AVRO', default_reader: { json: '"int"' }, readers: [{ uid: 2 }] } }],
          },
        ],
      },
    ],
    version: 'layout-1.3.0',
    layout_id: '3',
  };
  const tagged = {
    name: 't',
    max_filesize: { long: 1048576 },
    memstore_flushsize: { long: 65536 },
    keys_format: {
      [RKF2]: { encoding: 'FORMATTED', salt: { 'org.kiji.schema.avro.HashSpec': { hash_size: 3 } }, components: [{ name: 'k', type: 'STRING' }] },
    },
    locality_groups: [
      {
        name: 'default',
        in_memory: true,
        max_versions: 2,
        ttl_seconds: 100,
        block_size: { int: 65536 },
        bloom_type: { 'org.kiji.schema.avro.BloomType': 'ROW' },
        compression_type: 'SNAPPY',
        families: [
          { name: 'm', map_schema: { 'org.kiji.schema.avro.CellSchema': { type: 'INLINE', value: { string: '"long"' } } } },
          {
            name: 'g',
            renamed_from: null,
            columns: [
              {
                name: 'a',
                column_schema: {
                  type: 'AVRO',
                  default_reader: { 'org.kiji.schema.avro.AvroSchema': { json: { string: '"int"' } } },
                  readers: { array: [{ uid: { long: 2 } }] },
                },
              },
            ],
          },
        ],
      },
    ],
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
      name: 'default',
      aliases: ['dflt'],
      in_memory: false,
      max_versions: 3,
      ttl_seconds: 86400,
      block_size: 1024,
      bloom_type: 'ROWCOL',
      compression_type: 'GZ',
      families: [
        {
          name: 'info',
          aliases: ['i'],
          columns: [
            { name: 'name', aliases: ['n'], description: 'user name', column_schema: { type: 'INLINE', storage: 'UID', value: '"string"' } },
            { name: 'raw', column_schema: { type: 'RAW_BYTES' } },
            {
              name: 'avro',
              column_schema: { type: 'AVRO', avro_validation_policy: 'STRICT', readers: [{ uid: 2 }], writers: [{ uid: 2 }, { json: '"long"' }], written: [] },
            },
          ],
        },
      ],
    },
    {
      name: 'inmem',
      in_memory: true,
      max_versions: 1,
      ttl_seconds: 60,
      compression_type: 'NONE',
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
    'name',
    'max_filesize',
    'memstore_flushsize',
    'description',
    'keys_format',
    'locality_groups',
    'column_name_translator',
    'version',
    'layout_id',
    'reference_layout',
  ]);
  t.same(Object.keys(d.locality_groups[0]), [
    'id',
    'name',
    'aliases',
    'enabled',
    'description',
    'in_memory',
    'max_versions',
    'ttl_seconds',
    'block_size',
    'bloom_type',
    'compression_type',
    'families',
    'delete',
    'renamed_from',
  ]);
  t.same(Object.keys(d.locality_groups[0].families[0]), ['id', 'name', 'aliases', 'enabled', 'description', 'map_schema', 'columns', 'delete', 'renamed_from']);
  const col = d.locality_groups[0].families[0].columns[0];
  t.same(Object.keys(col), ['id', 'name', 'aliases', 'enabled', 'description', 'column_schema', 'delete', 'renamed_from']);
  t.same(Object.keys(col.column_schema), [
    'storage',
    'type',
    'value',
    'avro_validation_policy',
    'specific_reader_schema_class',
    'default_reader',
    'readers',
    'written',
    'writers',
    'protobuf_full_name',
    'protobuf_class_name',
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
  t.same(
    layout.localityGroups.map((lg) => lg.families.map((f) => f.localityGroup)),
    [['default'], ['inmem']],
  );
  t.match(familyOf(layout, 'purchases'), { maxVersions: 1, ttlSeconds: 60, localityGroup: 'inmem' });
});

t.test('demo users layout parses with typed columns, a record column and a counter map family', async (t) => {
  t.same(Object.keys(DEMO_LAYOUTS), ['users']);
  const layout = parseLayout(USERS_LAYOUT_JSON);
  t.equal(layout.name, 'users');
  t.same(layout.keyFormat, {
    encoding: 'FORMATTED',
    hashSize: 2,
    suppressMaterialization: false,
    rangeScanStartIndex: 1,
    nullableStartIndex: 1,
    components: [{ name: 'uid', type: 'LONG' }],
  });
  t.match(layout.localityGroups[0], { name: 'default', maxVersions: 5, ttlSeconds: FOREVER });
  t.same(
    familyOf(layout, 'info')!.columns.map((c) => c.name),
    ['name', 'email', 'age', 'score', 'tags', 'address'],
  );
  t.match(columnSchema(layout, 'info', 'age'), { type: 'INLINE', value: '"int"' });
  t.match(columnSchema(layout, 'info', 'address')!.value, /"type": "record"/);
  t.match(columnSchema(layout, 'logins', 'example.com'), { type: 'COUNTER', storage: 'FINAL' });
});

// ------------------------------------------------------------ accepted and refused versions

/** Every feature gate a version opens (layout-version.ts, layout-keys.ts, layout-cell.ts, layout-validate.ts). */
function gates(version: readonly [number, number, number]): { rkf2: boolean; v12: boolean; v13: boolean; v15: boolean } {
  const atLeast = (minor: number): boolean => version[0] > 1 || (version[0] === 1 && version[1] >= minor);
  return { rkf2: atLeast(1), v12: atLeast(2), v13: atLeast(3), v15: atLeast(5) };
}

/** A layout using every feature its version allows (so an accepted version is also a working gate). */
function richestLayout(version: string, numbers: readonly [number, number, number]): Json {
  const g = gates(numbers);
  const d = minimal(
    g.rkf2
      ? {
          encoding: 'FORMATTED',
          salt: { hash_size: 4 },
          components: [
            { name: 'k', type: 'STRING' },
            { name: 'n', type: 'LONG' },
          ],
        }
      : { encoding: 'HASH_PREFIX', hash_type: 'MD5', hash_size: 3 },
    version,
  );
  const lg = d.locality_groups[0];
  lg.families = [
    {
      name: 'f',
      columns: [
        { name: 'c', column_schema: { type: 'INLINE', value: '"string"' } },
        { name: 'n', column_schema: { type: 'COUNTER', storage: 'FINAL' } },
      ],
    },
    { name: 'm', map_schema: { type: 'INLINE', value: '"long"' } },
  ];
  if (g.v12) {
    Object.assign(d, { max_filesize: 1 << 30, memstore_flushsize: 1 << 20 });
    Object.assign(lg, { block_size: 65536, bloom_type: 'ROW' });
  }
  if (g.v13) {
    lg.families[0].columns.push({ name: 'a', column_schema: { type: 'AVRO', default_reader: { json: '"int"' }, readers: [{ json: '"int"' }] } });
    lg.families[0].columns.push({ name: 'r', column_schema: { type: 'RAW_BYTES' } });
  }
  if (g.v15) d.column_name_translator = 'IDENTITY';
  return d;
}

t.test('every supported version string is accepted with a layout valid for it; the text is kept', async (t) => {
  const accepted: [string, [number, number, number]][] = [
    ['layout-1', [1, 0, 0]],
    ['layout-1.0', [1, 0, 0]],
    ['layout-1.0.0', [1, 0, 0]],
    ['layout-1.1', [1, 1, 0]],
    ['layout-1.1.0', [1, 1, 0]],
    ['layout-1.2', [1, 2, 0]],
    ['layout-1.2.0', [1, 2, 0]],
    ['layout-1.3', [1, 3, 0]],
    ['layout-1.3.0', [1, 3, 0]],
    ['layout-1.4', [1, 4, 0]],
    ['layout-1.4.0', [1, 4, 0]],
    ['layout-1.5', [1, 5, 0]],
    ['layout-1.5.0', [1, 5, 0]],
  ];
  for (const [version, numbers] of accepted) {
    const layout = parseLayout(richestLayout(version, numbers));
    t.equal((layout.desc as Json).version, version, version);
    t.same(parseLayout(layout.desc), layout, `${version}: round trip`);
    // A RAW_BYTES column is the 1.3 gate: refused below 1.3, accepted from 1.3.
    const rawBytes = minimal({ encoding: 'RAW' }, version);
    rawBytes.locality_groups[0].families = [{ name: 'f', columns: [{ name: 'r', column_schema: { type: 'RAW_BYTES' } }] }];
    if (gates(numbers).v13) t.ok(parseLayout(rawBytes), `${version}: RAW_BYTES accepted`);
    else t.match(rejection(rawBytes), /cell type RAW_BYTES requires layout version layout-1\.3\.0 or later/, `${version}: RAW_BYTES refused`);
  }
  t.equal((parseLayout(richestLayout('kiji-1.0', [1, 0, 0])).desc as Json).version, 'layout-1.0.0');
});

t.test('versions after layout-1.5.0 and before layout-1.0.0 are refused naming the supported range', async (t) => {
  for (const version of ['layout-1.5.1', 'layout-1.6', 'layout-1.6.0', 'layout-2', 'layout-2.0', 'layout-2.0.0', 'layout-0.9', 'layout-0']) {
    t.equal(
      rejection(minimal({ encoding: 'RAW' }, version)),
      `version: "${version}" is not supported: supported layout versions are layout-1.0.0 to layout-1.5.0`,
      version,
    );
  }
  for (const version of ['1.5.0', 'Layout-1.5.0', 'layout-1.5.0.0', 'layout-1..5', 'layout-', '']) {
    t.match(rejection(minimal({ encoding: 'RAW' }, version)), /^version: ".*" (is not a version|must use the layout protocol)/, JSON.stringify(version));
  }
});

// ------------------------------------------------------------ seeded random layouts

const NS = 'org.kiji.schema.avro.';

/** The random choices of one layout; kept so the parsed layout can be checked against them. */
interface Expected {
  name: string;
  version: string;
  keyFormat: RowKeyFormat;
  /** Per locality group: explicit id or 0, name, and per family: explicit id or 0, name, map?, columns [id or 0, name]. */
  lgs: {
    id: number;
    name: string;
    maxVersions: number;
    ttlSeconds: number;
    families: { id: number; name: string; map: boolean; columns: [number, string][] }[];
  }[];
}

class LayoutGen {
  readonly rand: () => number;
  private serial = 0;
  readonly tagProbability: number;

  constructor(readonly seed: number) {
    this.rand = prng(seed);
    this.tagProbability = [0, 0.5, 1][this.int(0, 2)]!; // all bare, mixed, all wrapped
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.rand() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)]!;
  }

  /** A union value, bare or wrapped as {"<type name>": value}. */
  u(value: unknown, typeName: string): unknown {
    return this.chance(this.tagProbability) ? { [typeName]: value } : value;
  }

  /** A valid name, unique in the whole layout (a serial number keeps names and aliases apart). */
  name(): string {
    const first = this.pick(['a', 'Z', '_', 'fam', 'col', 'x_']);
    let rest = '';
    for (let i = this.int(0, 6); i > 0; i--) rest += this.pick(['a', 'b', 'Q', '0', '9', '_']);
    return `${first}${rest}_${this.serial++}`;
  }

  alias(): string {
    return `${this.pick(['-', '0', 'al', 'B_', '9-'])}${this.serial++}`;
  }

  /** Fields every element may carry: aliases, enabled, description, and explicit defaults. */
  head(out: Json): void {
    if (this.chance(0.3)) out.aliases = Array.from({ length: this.int(0, 2) }, () => this.alias());
    if (this.chance(0.2)) out.enabled = this.chance(0.5);
    if (this.chance(0.3)) out.description = randomString(this.rand, 12);
    if (this.chance(0.1)) out.delete = false;
    if (this.chance(0.1)) out.renamed_from = null;
  }

  /** Explicit ids for some of `n` elements (distinct), 0 for the others. */
  ids(n: number): number[] {
    const pool = new Set<number>();
    while (pool.size < n) pool.add(this.chance(0.1) ? this.int(1, 2147483647) : this.int(1, 2 * n + 2));
    const ids = [...pool];
    return ids.map((id) => (this.chance(0.3) ? id : 0));
  }

  avroSchema(): string {
    return this.pick([
      '"string"',
      '"int"',
      '"long"',
      '"double"',
      '"float"',
      '"boolean"',
      '"bytes"',
      '"null"',
      '["null","string"]',
      '["long","string"]',
      '{"type":"array","items":"long"}',
      '{"type":"map","values":"int"}',
      '{"type":"enum","name":"E","symbols":["A","B"]}',
      '{"type":"fixed","name":"F","size":4}',
      '{"type":"record","name":"R","namespace":"ns","fields":[{"name":"a","type":"long"},{"name":"b","type":["null","string"],"default":null}]}',
    ]);
  }

  /** An AvroSchema; wrapped only where it is a union branch (default_reader), not as an array item. */
  schemaRef(inUnion: boolean): Json {
    const ref: Json = this.chance(0.5) ? { uid: this.u(this.int(0, 30), 'long') } : { json: this.u(this.avroSchema(), 'string') };
    if (this.chance(0.2)) ref['uid' in ref ? 'json' : 'uid'] = null;
    return inUnion ? this.u(ref, `${NS}AvroSchema`) : ref;
  }

  schemaList(): unknown {
    return this.u(
      Array.from({ length: this.int(0, 3) }, () => this.schemaRef(false)),
      'array',
    );
  }

  cellSchema(v13: boolean): Json {
    const type = this.pick(v13 ? ['INLINE', 'COUNTER', 'AVRO', 'RAW_BYTES'] : ['INLINE', 'COUNTER']);
    const cs: Json = { type };
    switch (type) {
      case 'INLINE':
        cs.value = this.u(this.avroSchema(), 'string');
        if (this.chance(0.7)) cs.storage = this.pick(['HASH', 'UID', 'FINAL']);
        break;
      case 'COUNTER':
        cs.storage = 'FINAL';
        break;
      case 'AVRO':
        if (this.chance(0.7)) cs.storage = this.pick(['HASH', 'UID']);
        if (this.chance(0.6)) cs.default_reader = this.schemaRef(true);
        else if (this.chance(0.2)) cs.default_reader = null;
        for (const list of ['readers', 'written', 'writers']) {
          if (this.chance(0.5)) cs[list] = this.schemaList();
          else if (this.chance(0.2)) cs[list] = null;
        }
        if (this.chance(0.2)) cs.specific_reader_schema_class = this.u('org.example.Rec', 'string');
        break;
      default: // RAW_BYTES
        if (this.chance(0.5)) cs.storage = this.pick(['HASH', 'UID']);
    }
    if (this.chance(0.5)) cs.avro_validation_policy = this.pick(['STRICT', 'DEVELOPER', 'SCHEMA_1_0', 'NONE']);
    if (this.chance(0.1)) Object.assign(cs, { protobuf_full_name: null, protobuf_class_name: null });
    return cs;
  }

  keysFormat(rkf2: boolean): [Json, RowKeyFormat] {
    if (!rkf2 || this.chance(0.3)) {
      const encoding = this.pick(['RAW', 'HASH', 'HASH_PREFIX'] as const);
      const kf: Json = { encoding };
      if (encoding === 'RAW') {
        if (this.chance(0.3)) kf.hash_size = 0;
        return [this.u(kf, `${NS}RowKeyFormat`), { encoding }];
      }
      kf.hash_type = this.u('MD5', `${NS}HashType`);
      const hashSize = this.int(0, 16);
      if (hashSize !== 0 || this.chance(0.5)) kf.hash_size = hashSize;
      return [this.u(kf, `${NS}RowKeyFormat`), encoding === 'HASH' ? { encoding } : { encoding, hashSize }];
    }
    // RowKeyFormat2. Bare, it must carry a field RowKeyFormat lacks (components) to resolve as RowKeyFormat2.
    const wrap = (kf: Json): Json => (this.chance(this.tagProbability) ? { [`${NS}RowKeyFormat2`]: kf } : { ...kf, components: kf.components ?? [] });
    if (this.chance(0.15)) {
      const kf: Json = { encoding: 'RAW' };
      if (this.chance(0.3)) kf.salt = null;
      return [wrap(kf), { encoding: 'RAW' }];
    }
    const n = this.int(1, 5);
    const components = Array.from({ length: n }, () => ({ name: this.name(), type: this.pick(['STRING', 'INTEGER', 'LONG'] as const) }));
    const kf: Json = { encoding: 'FORMATTED', components };
    let hashSize = 2;
    let suppress = false;
    const saltKind = this.int(0, 2);
    if (saltKind === 1) {
      kf.salt = this.u({}, `${NS}HashSpec`);
      hashSize = 16;
    } else if (saltKind === 2) {
      hashSize = this.int(1, 16);
      suppress = this.chance(0.3);
      const salt: Json = { hash_size: hashSize };
      if (suppress || this.chance(0.3)) salt.suppress_key_materialization = suppress;
      if (this.chance(0.3)) salt.hash_type = 'MD5';
      kf.salt = this.u(salt, `${NS}HashSpec`);
    }
    const rangeScanStartIndex = suppress ? n : this.int(1, n);
    const nullableStartIndex = this.int(1, n);
    if (rangeScanStartIndex !== 1 || this.chance(0.3)) kf.range_scan_start_index = rangeScanStartIndex;
    if (nullableStartIndex !== 1 || this.chance(0.3)) kf.nullable_start_index = nullableStartIndex;
    return [wrap(kf), { encoding: 'FORMATTED', hashSize, suppressMaterialization: suppress, rangeScanStartIndex, nullableStartIndex, components }];
  }

  layout(): [Json, Expected] {
    const [version, numbers] = this.pick(VERSIONS);
    const g = gates(numbers);
    const [keysFormat, keyFormat] = this.keysFormat(g.rkf2);
    const translator = g.v15 ? this.pick(['SHORT', 'IDENTITY', 'HBASE_NATIVE']) : 'SHORT';
    const native = translator === 'HBASE_NATIVE';
    const lgCount = this.int(native ? 1 : 0, 3);
    const lgIds = this.ids(lgCount);
    const lgs: Json[] = [];
    const expected: Expected = { name: this.name(), version: version === 'kiji-1.0' ? 'layout-1.0.0' : version, keyFormat, lgs: [] };
    for (let i = 0; i < lgCount; i++) {
      const lgName = this.name();
      const maxVersions = this.chance(0.3) ? FOREVER : this.int(1, 10);
      const ttlSeconds = this.chance(0.3) ? FOREVER : this.int(1, 2147483647);
      const lg: Json = {
        name: lgName,
        in_memory: this.chance(0.5),
        max_versions: maxVersions,
        ttl_seconds: ttlSeconds,
        compression_type: this.pick(['NONE', 'GZ', 'LZO', 'SNAPPY']),
      };
      if (lgIds[i]) lg.id = lgIds[i];
      this.head(lg);
      if (g.v12 && this.chance(0.4)) lg.block_size = this.u(this.int(1, 1 << 20), 'int');
      if (g.v12 && this.chance(0.4)) lg.bloom_type = this.u(this.pick(['NONE', 'ROW', 'ROWCOL']), `${NS}BloomType`);
      // HBASE_NATIVE: at most one family per group, group-type, named as its locality group.
      const famCount = native ? this.int(0, 1) : this.int(0, 3);
      const famIds = this.ids(famCount);
      const fams: Expected['lgs'][number]['families'] = [];
      const famDescs: Json[] = [];
      for (let j = 0; j < famCount; j++) {
        const fam: Json = { name: native ? lgName : this.name() };
        if (famIds[j]) fam.id = famIds[j];
        this.head(fam);
        const map = !native && this.chance(0.35);
        const columns: [number, string][] = [];
        if (map) {
          fam.map_schema = this.u(this.cellSchema(g.v13), `${NS}CellSchema`);
          if (this.chance(0.2)) fam.columns = [];
        } else {
          if (this.chance(0.1)) fam.map_schema = null;
          const colCount = this.int(0, 4);
          const colIds = this.ids(colCount);
          if (colCount > 0 || this.chance(0.5)) fam.columns = [];
          for (let k = 0; k < colCount; k++) {
            const col: Json = { name: this.name(), column_schema: this.cellSchema(g.v13) };
            if (colIds[k]) col.id = colIds[k];
            this.head(col);
            fam.columns.push(col);
            columns.push([colIds[k]!, col.name]);
          }
        }
        famDescs.push(fam);
        fams.push({ id: famIds[j]!, name: fam.name, map, columns });
      }
      if (famCount > 0 || this.chance(0.5)) lg.families = famDescs;
      lgs.push(lg);
      expected.lgs.push({ id: lgIds[i]!, name: lgName, maxVersions, ttlSeconds, families: fams });
    }
    const desc: Json = { name: expected.name, keys_format: keysFormat, version };
    if (lgCount > 0 || this.chance(0.5)) desc.locality_groups = lgs;
    if (translator !== 'SHORT' || this.chance(0.3)) desc.column_name_translator = translator;
    if (g.v12 && this.chance(0.3)) desc.max_filesize = this.u(this.chance(0.5) ? Number.MAX_SAFE_INTEGER : this.int(1, 2 ** 40), 'long');
    if (g.v12 && this.chance(0.3)) desc.memstore_flushsize = this.u(this.int(1, 2 ** 31), 'long');
    if (this.chance(0.3)) desc.description = randomString(this.rand, 20);
    if (this.chance(0.3)) desc.layout_id = this.u(String(this.int(0, 1000)), 'string');
    if (this.chance(0.1)) desc.reference_layout = null;
    return [this.shuffleKeys(desc), expected];
  }

  /** JSON field order does not matter to the decoder: shuffle the top level now and then. */
  shuffleKeys(o: Json): Json {
    if (!this.chance(0.3)) return o;
    const entries = Object.entries(o);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    return Object.fromEntries(entries);
  }
}

/** Every version string the grammar accepts, with its numbers (layout-version.ts). */
const VERSIONS: readonly [string, [number, number, number]][] = [
  ['kiji-1.0', [1, 0, 0]],
  ['layout-1', [1, 0, 0]],
  ['layout-1.0', [1, 0, 0]],
  ['layout-1.0.0', [1, 0, 0]],
  ['layout-1.1', [1, 1, 0]],
  ['layout-1.1.0', [1, 1, 0]],
  ['layout-1.2.0', [1, 2, 0]],
  ['layout-1.3.0', [1, 3, 0]],
  ['layout-1.4', [1, 4, 0]],
  ['layout-1.4.0', [1, 4, 0]],
  ['layout-1.5', [1, 5, 0]],
  ['layout-1.5.0', [1, 5, 0]],
];

t.test('seeded random layouts: parse, then parseLayout(desc) and its JSON text give an equal layout', async (t) => {
  const SEEDS = 300;
  const seen = { map: 0, group: 0, columns: 0, rkf: new Set<string>(), versions: new Set<string>(), cells: new Set<string>(), translators: new Set<string>() };
  for (let seed = 1; seed <= SEEDS; seed++) {
    const [input, want] = new LayoutGen(seed).layout();
    const text = JSON.stringify(input);
    let layout: TableLayout;
    try {
      layout = parseLayout(input);
    } catch (e) {
      t.fail(`seed ${seed}: the generated layout was refused: ${(e as Error).message}\n${text}`);
      return;
    }
    const ok = [
      t.same(parseLayout(text), layout, `seed ${seed}: the input as JSON text parses the same`),
      t.same(parseLayout(layout.desc), layout, `seed ${seed}: parseLayout(desc) equals the layout`),
      t.same(parseLayout(JSON.stringify(layout.desc)), layout, `seed ${seed}: parseLayout(JSON text of desc) equals the layout`),
      t.same(parseLayout(layout.desc).desc, layout.desc, `seed ${seed}: desc is a fixed point`),
      // The layout is what was generated, not just self-consistent.
      t.equal(layout.name, want.name, `seed ${seed}: name`),
      t.equal((layout.desc as Json).version, want.version, `seed ${seed}: version`),
      t.same(layout.keyFormat, want.keyFormat, `seed ${seed}: key format`),
      t.same(
        layout.localityGroups.map((lg) => ({
          name: lg.name,
          maxVersions: lg.maxVersions,
          ttlSeconds: lg.ttlSeconds,
          families: lg.families.map((f) => ({ name: f.name, map: f.mapSchema !== undefined, columns: f.columns.map((c) => c.name) })),
        })),
        want.lgs.map((lg) => ({
          name: lg.name,
          maxVersions: lg.maxVersions,
          ttlSeconds: lg.ttlSeconds,
          families: lg.families.map((f) => ({ name: f.name, map: f.map, columns: f.columns.map(([, name]) => name) })),
        })),
        `seed ${seed}: locality groups, families and columns`,
      ),
      t.ok(
        layout.localityGroups.every((lg, i) => {
          const w = want.lgs[i]!;
          return (
            (w.id === 0 || lg.id === w.id) &&
            lg.families.every((f, j) => {
              const wf = w.families[j]!;
              return (wf.id === 0 || f.id === wf.id) && f.columns.every((c, k) => wf.columns[k]![0] === 0 || c.id === wf.columns[k]![0]);
            })
          );
        }),
        `seed ${seed}: explicit ids are kept`,
      ),
    ];
    if (!ok.every(Boolean)) {
      t.comment(`failing seed ${seed}; input: ${text}`);
      return;
    }
    for (const lg of layout.localityGroups)
      for (const f of lg.families) {
        if (f.mapSchema) seen.map++;
        else seen.group++;
        seen.columns += f.columns.length;
        for (const cs of [f.mapSchema, ...f.columns.map((c) => c.schema)]) {
          if (cs === undefined) continue;
          seen.cells.add(cs.type);
          if (cs.defaultReader) seen.cells.add(`${cs.type} default_reader`);
          if (cs.readers.length > 0 && cs.writers.length > 0) seen.cells.add(`${cs.type} readers+writers`);
        }
      }
    seen.translators.add((layout.desc as Json).column_name_translator);
    seen.rkf.add(`${Object.keys((layout.desc as Json).keys_format)[0]}/${layout.keyFormat.encoding}`);
    seen.versions.add(want.version);
  }
  // The generator reaches every kind it is meant to.
  t.ok(
    seen.map > 50 && seen.group > 50 && seen.columns > 200,
    `families and columns generated: ${JSON.stringify({ map: seen.map, group: seen.group, columns: seen.columns })}`,
  );
  t.same([...seen.cells].sort(), ['AVRO', 'AVRO default_reader', 'AVRO readers+writers', 'COUNTER', 'INLINE', 'RAW_BYTES']);
  t.same([...seen.translators].sort(), ['HBASE_NATIVE', 'IDENTITY', 'SHORT']);
  t.same([...seen.rkf].sort(), [
    `${NS}RowKeyFormat/HASH`,
    `${NS}RowKeyFormat/HASH_PREFIX`,
    `${NS}RowKeyFormat/RAW`,
    `${NS}RowKeyFormat2/FORMATTED`,
    `${NS}RowKeyFormat2/RAW`,
  ]);
  t.same([...seen.versions].sort(), [...new Set(VERSIONS.map(([v]) => (v === 'kiji-1.0' ? 'layout-1.0.0' : v)))].sort());
});
