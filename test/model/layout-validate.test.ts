import t from 'tap';
import { isRowgateError } from '../../lib/errors.js';
import { parseLayout } from '../../lib/model/layout/layout.js';

type Json = any;

const RKF2 = 'org.kiji.schema.avro.RowKeyFormat2';
const FOREVER = 2147483647;

/** A valid layout (two key components, a group and a map family); each case changes one thing. */
function base(): Json {
  return {
    name: 't',
    keys_format: {
      encoding: 'FORMATTED',
      components: [
        { name: 'k', type: 'STRING' },
        { name: 'n', type: 'LONG' },
      ],
    },
    locality_groups: [
      {
        name: 'default',
        in_memory: false,
        max_versions: 3,
        ttl_seconds: FOREVER,
        compression_type: 'NONE',
        families: [
          {
            name: 'info',
            columns: [
              { name: 'a', column_schema: { type: 'INLINE', value: '"string"' } },
              { name: 'b', column_schema: { type: 'INLINE', value: '"long"' } },
            ],
          },
          { name: 'm', map_schema: { type: 'INLINE', value: '"int"' } },
        ],
      },
    ],
    version: 'layout-1.5.0',
  };
}

const lg0 = (d: Json): Json => d.locality_groups[0];
const info = (d: Json): Json => d.locality_groups[0].families[0];
const colA = (d: Json): Json => d.locality_groups[0].families[0].columns[0];
const secondLg = (d: Json, families: Json[] = []): void => {
  d.locality_groups.push({ name: 'other', in_memory: true, max_versions: 1, ttl_seconds: 60, compression_type: 'NONE', families });
};
const keys2 = (d: Json, rkf2: Json): void => {
  d.keys_format = {
    [RKF2]: {
      encoding: 'FORMATTED',
      components: [
        { name: 'k', type: 'STRING' },
        { name: 'n', type: 'LONG' },
      ],
      ...rkf2,
    },
  };
};

const COL_A = 'locality_groups[0].families[0].columns[0]';
const CS_A = `${COL_A}.column_schema`;

/** [what is checked, change to the base layout, path the message must start with, what it must say] */
const cases: [string, (d: Json) => void, string, RegExp][] = [
  // decoding: strict records, required fields, JSON types
  [
    'unknown field is rejected naming its path',
    (d) => {
      colA(d).colum_schema = colA(d).column_schema;
      delete colA(d).column_schema;
    },
    `${COL_A}.colum_schema`,
    /^[^:]+: unknown field/,
  ],
  [
    'unknown top-level field is rejected',
    (d) => {
      d.keysformat = {};
    },
    'keysformat',
    /unknown field/,
  ],
  [
    'missing table name',
    (d) => {
      delete d.name;
    },
    'name',
    /required field is missing/,
  ],
  [
    'missing keys_format',
    (d) => {
      delete d.keys_format;
    },
    'keys_format',
    /required field is missing/,
  ],
  [
    'missing version',
    (d) => {
      delete d.version;
    },
    'version',
    /required field is missing/,
  ],
  [
    'missing in_memory',
    (d) => {
      delete lg0(d).in_memory;
    },
    'locality_groups[0].in_memory',
    /required field is missing/,
  ],
  [
    'missing max_versions',
    (d) => {
      delete lg0(d).max_versions;
    },
    'locality_groups[0].max_versions',
    /required field is missing/,
  ],
  [
    'missing compression_type',
    (d) => {
      delete lg0(d).compression_type;
    },
    'locality_groups[0].compression_type',
    /required field is missing/,
  ],
  [
    'missing column_schema',
    (d) => {
      delete colA(d).column_schema;
    },
    `${COL_A}.column_schema`,
    /required field is missing/,
  ],
  [
    'missing cell type',
    (d) => {
      delete colA(d).column_schema.type;
    },
    `${CS_A}.type`,
    /required field is missing/,
  ],
  [
    'missing column name',
    (d) => {
      delete colA(d).name;
    },
    `${COL_A}.name`,
    /required field is missing/,
  ],
  [
    'int given as a string',
    (d) => {
      lg0(d).max_versions = '3';
    },
    'locality_groups[0].max_versions',
    /must be an integer/,
  ],
  [
    'int given as a fraction',
    (d) => {
      lg0(d).ttl_seconds = 1.5;
    },
    'locality_groups[0].ttl_seconds',
    /must be an integer/,
  ],
  [
    'int beyond 32 bits',
    (d) => {
      lg0(d).max_versions = 2147483648;
    },
    'locality_groups[0].max_versions',
    /32-bit/,
  ],
  [
    'int given as a too large bigint',
    (d) => {
      lg0(d).max_versions = 2n ** 40n;
    },
    'locality_groups[0].max_versions',
    /32-bit integer, got 1099511627776$/,
  ],
  [
    'long given as a bigint beyond the safe range',
    (d) => {
      d.max_filesize = 2n ** 60n;
    },
    'max_filesize',
    /out of range/,
  ],
  [
    'boolean given as a string',
    (d) => {
      lg0(d).in_memory = 'no';
    },
    'locality_groups[0].in_memory',
    /true or false/,
  ],
  [
    'unknown enum symbol',
    (d) => {
      lg0(d).compression_type = 'gzip';
    },
    'locality_groups[0].compression_type',
    /must be one of "NONE", "GZ", "LZO", "SNAPPY"/,
  ],
  [
    'array given as a string',
    (d) => {
      info(d).aliases = 'x';
    },
    'locality_groups[0].families[0].aliases',
    /must be an array/,
  ],
  [
    'null for a non-optional field',
    (d) => {
      d.description = null;
    },
    'description',
    /must be a string/,
  ],
  [
    'record given as an array',
    (d) => {
      colA(d).column_schema = [];
    },
    CS_A,
    /must be a JSON object/,
  ],
  [
    'untagged keys_format matching neither record names both failures',
    (d) => {
      d.keys_format = { encoding: 'FORMATTED', salt: {}, compnents: [] };
    },
    'keys_format',
    /not a RowKeyFormat \(keys_format\.salt: unknown field.*not a RowKeyFormat2 \(keys_format\.compnents: unknown field/,
  ],
  // versions
  [
    'version kiji-1.1 is rejected with a hint',
    (d) => {
      d.version = 'kiji-1.1';
    },
    'version',
    /only kiji-1\.0 is accepted/,
  ],
  [
    'version newer than layout-1.5.0',
    (d) => {
      d.version = 'layout-1.6.0';
    },
    'version',
    /supported layout versions are layout-1\.0\.0 to layout-1\.5\.0/,
  ],
  [
    'version older than layout-1.0.0',
    (d) => {
      d.version = 'layout-0.9';
    },
    'version',
    /not supported/,
  ],
  [
    'version without protocol',
    (d) => {
      d.version = '1.3.0';
    },
    'version',
    /layout protocol/,
  ],
  [
    'version with another protocol',
    (d) => {
      d.version = 'system-2.0';
    },
    'version',
    /layout protocol/,
  ],
  [
    'version that is not a version',
    (d) => {
      d.version = 'layout-one';
    },
    'version',
    /is not a version/,
  ],
  // version gates
  [
    'RowKeyFormat2 needs layout-1.1.0',
    (d) => {
      d.version = 'layout-1.0.0';
    },
    'keys_format',
    /RowKeyFormat2 requires layout version layout-1\.1\.0/,
  ],
  [
    'max_filesize needs layout-1.2.0',
    (d) => {
      d.version = 'layout-1.1.0';
      d.max_filesize = 1000;
    },
    'max_filesize',
    /layout-1\.2\.0/,
  ],
  [
    'memstore_flushsize needs layout-1.2.0',
    (d) => {
      d.version = 'layout-1.1.0';
      d.memstore_flushsize = 1000;
    },
    'memstore_flushsize',
    /layout-1\.2\.0/,
  ],
  [
    'block_size needs layout-1.2.0',
    (d) => {
      d.version = 'layout-1.1.0';
      lg0(d).block_size = 1024;
    },
    'locality_groups[0].block_size',
    /block_size requires layout version layout-1\.2\.0/,
  ],
  [
    'bloom_type needs layout-1.2.0',
    (d) => {
      d.version = 'layout-1.1.0';
      lg0(d).bloom_type = 'ROW';
    },
    'locality_groups[0].bloom_type',
    /layout-1\.2\.0/,
  ],
  [
    'AVRO cells need layout-1.3.0',
    (d) => {
      d.version = 'layout-1.2.0';
      colA(d).column_schema = { type: 'AVRO' };
    },
    `${CS_A}.type`,
    /cell type AVRO requires layout version layout-1\.3\.0/,
  ],
  [
    'RAW_BYTES cells need layout-1.3.0',
    (d) => {
      d.version = 'layout-1.2.0';
      colA(d).column_schema = { type: 'RAW_BYTES' };
    },
    `${CS_A}.type`,
    /layout-1\.3\.0/,
  ],
  [
    'PROTOBUF cells need layout-1.4.0',
    (d) => {
      d.version = 'layout-1.3.0';
      colA(d).column_schema = { type: 'PROTOBUF' };
    },
    `${CS_A}.type`,
    /layout-1\.4\.0/,
  ],
  [
    'non-SHORT column_name_translator needs layout-1.5.0',
    (d) => {
      d.version = 'layout-1.4.0';
      d.column_name_translator = 'IDENTITY';
    },
    'column_name_translator',
    /layout-1\.5\.0/,
  ],
  // unsupported cell types
  [
    'CLASS cells are refused: no Java classes',
    (d) => {
      colA(d).column_schema = { type: 'CLASS', value: 'com.example.Rec' };
    },
    `${CS_A}.type`,
    /cannot load Java classes \(com\.example\.Rec\)/,
  ],
  [
    'PROTOBUF cells are refused: no protobuf classes',
    (d) => {
      colA(d).column_schema = { type: 'PROTOBUF', protobuf_full_name: 'x.Y', protobuf_class_name: 'com.x.Y' };
    },
    `${CS_A}.type`,
    /cannot load protobuf classes \(com\.x\.Y\)/,
  ],
  // storage rules and Avro schemas
  [
    'COUNTER with the default storage',
    (d) => {
      colA(d).column_schema = { type: 'COUNTER' };
    },
    `${CS_A}.storage`,
    /COUNTER cells require storage "FINAL", got "HASH"/,
  ],
  [
    'COUNTER with UID storage',
    (d) => {
      colA(d).column_schema = { type: 'COUNTER', storage: 'UID' };
    },
    `${CS_A}.storage`,
    /require storage "FINAL"/,
  ],
  [
    'FINAL storage for AVRO',
    (d) => {
      colA(d).column_schema = { type: 'AVRO', storage: 'FINAL' };
    },
    `${CS_A}.storage`,
    /only allowed for INLINE and COUNTER cells, not AVRO/,
  ],
  [
    'FINAL storage for RAW_BYTES',
    (d) => {
      colA(d).column_schema = { type: 'RAW_BYTES', storage: 'FINAL' };
    },
    `${CS_A}.storage`,
    /not RAW_BYTES/,
  ],
  [
    'INLINE value that is no Avro schema',
    (d) => {
      colA(d).column_schema.value = '"strin"';
    },
    `${CS_A}.value`,
    /not a valid Avro schema/,
  ],
  [
    'INLINE value that is no JSON',
    (d) => {
      colA(d).column_schema.value = 'string';
    },
    `${CS_A}.value`,
    /not valid JSON text/,
  ],
  [
    'INLINE record schema with a bad default',
    (d) => {
      colA(d).column_schema.value = '{"type":"record","name":"R","fields":[{"name":"x","type":"int","default":"a"}]}';
    },
    `${CS_A}.value`,
    /not a valid Avro schema/,
  ],
  [
    'INLINE without value',
    (d) => {
      delete colA(d).column_schema.value;
    },
    `${CS_A}.value`,
    /INLINE cells need an Avro schema/,
  ],
  [
    'invalid map_schema value',
    (d) => {
      d.locality_groups[0].families[1].map_schema.value = '"nope"';
    },
    'locality_groups[0].families[1].map_schema.value',
    /not a valid Avro schema/,
  ],
  [
    'AVRO default_reader with neither uid nor json',
    (d) => {
      colA(d).column_schema = { type: 'AVRO', default_reader: {} };
    },
    `${CS_A}.default_reader`,
    /exactly one of uid and json/,
  ],
  [
    'AVRO default_reader with both uid and json',
    (d) => {
      colA(d).column_schema = { type: 'AVRO', default_reader: { uid: 0, json: '"string"' } };
    },
    `${CS_A}.default_reader`,
    /exactly one/,
  ],
  [
    'AVRO default_reader json that is no schema',
    (d) => {
      colA(d).column_schema = { type: 'AVRO', default_reader: { json: '"Strin"' } };
    },
    `${CS_A}.default_reader.json`,
    /not a valid Avro schema/,
  ],
  [
    'AVRO reader with a negative uid',
    (d) => {
      colA(d).column_schema = { type: 'AVRO', readers: [{ uid: -1 }] };
    },
    `${CS_A}.readers[0].uid`,
    />= 0/,
  ],
  [
    'AVRO writer json that is no schema',
    (d) => {
      colA(d).column_schema = { type: 'AVRO', writers: [{ uid: 1 }, { json: '{' }] };
    },
    `${CS_A}.writers[1].json`,
    /not valid JSON/,
  ],
  // names
  [
    'invalid table name',
    (d) => {
      d.name = '1table';
    },
    'name',
    /table name "1table" is invalid/,
  ],
  [
    'table name longer than 255 characters',
    (d) => {
      d.name = 't'.repeat(256);
    },
    'name',
    /table name is 256 characters long; at most 255 are allowed/,
  ],
  [
    'column name longer than 255 characters',
    (d) => {
      colA(d).name = 'c'.repeat(4087);
    },
    `${COL_A}.name`,
    /column name is 4087 characters long/,
  ],
  [
    'invalid locality group name',
    (d) => {
      lg0(d).name = 'a-b';
    },
    'locality_groups[0].name',
    /locality group name "a-b" is invalid/,
  ],
  [
    'invalid family name',
    (d) => {
      info(d).name = 'in fo';
    },
    'locality_groups[0].families[0].name',
    /family name/,
  ],
  [
    'invalid column name',
    (d) => {
      colA(d).name = 'a:b';
    },
    `${COL_A}.name`,
    /column name "a:b" is invalid/,
  ],
  [
    'invalid alias',
    (d) => {
      info(d).aliases = ['ok-1', 'not ok'];
    },
    'locality_groups[0].families[0].aliases[1]',
    /alias "not ok" is invalid/,
  ],
  [
    'invalid key component name',
    (d) => {
      d.keys_format.components[1].name = '2n';
    },
    'keys_format.components[1].name',
    /component name "2n" is invalid/,
  ],
  // uniqueness
  [
    'duplicate key component names',
    (d) => {
      d.keys_format.components[1].name = 'k';
    },
    'keys_format.components[1].name',
    /"k" is already used as a component name or alias at keys_format\.components\[0\]\.name/,
  ],
  [
    'duplicate locality group names',
    (d) => {
      secondLg(d);
      d.locality_groups[1].name = 'default';
    },
    'locality_groups[1].name',
    /already used as a locality group name or alias at locality_groups\[0\]\.name/,
  ],
  [
    'locality group alias equal to another group name',
    (d) => {
      secondLg(d);
      d.locality_groups[1].aliases = ['default'];
    },
    'locality_groups[1].aliases[0]',
    /already used/,
  ],
  [
    'family names are unique across locality groups',
    (d) => {
      secondLg(d, [{ name: 'info' }]);
    },
    'locality_groups[1].families[0].name',
    /"info" is already used as a family name or alias at locality_groups\[0\]\.families\[0\]\.name/,
  ],
  [
    'family alias equal to another family name',
    (d) => {
      d.locality_groups[0].families[1].aliases = ['info'];
    },
    'locality_groups[0].families[1].aliases[0]',
    /already used/,
  ],
  [
    'duplicate column names',
    (d) => {
      info(d).columns[1].name = 'a';
    },
    'locality_groups[0].families[0].columns[1].name',
    /"a" is already used as a column name or alias/,
  ],
  [
    'column alias equal to another column name',
    (d) => {
      info(d).columns[1].aliases = ['a'];
    },
    'locality_groups[0].families[0].columns[1].aliases[0]',
    /already used/,
  ],
  [
    'alias equal to its own name',
    (d) => {
      colA(d).aliases = ['a'];
    },
    `${COL_A}.aliases[0]`,
    /already used as a column name or alias at .*columns\[0\]\.name/,
  ],
  // limits
  [
    'ttl_seconds of 0',
    (d) => {
      lg0(d).ttl_seconds = 0;
    },
    'locality_groups[0].ttl_seconds',
    /must be greater than 0, got 0/,
  ],
  [
    'negative ttl_seconds',
    (d) => {
      lg0(d).ttl_seconds = -5;
    },
    'locality_groups[0].ttl_seconds',
    /greater than 0/,
  ],
  [
    'max_versions of 0',
    (d) => {
      lg0(d).max_versions = 0;
    },
    'locality_groups[0].max_versions',
    /greater than 0/,
  ],
  [
    'block_size of 0',
    (d) => {
      lg0(d).block_size = 0;
    },
    'locality_groups[0].block_size',
    /greater than 0/,
  ],
  [
    'max_filesize of 0',
    (d) => {
      d.max_filesize = 0;
    },
    'max_filesize',
    /greater than 0/,
  ],
  [
    'negative memstore_flushsize',
    (d) => {
      d.memstore_flushsize = -1;
    },
    'memstore_flushsize',
    /greater than 0/,
  ],
  // family kinds, creation-only rules, ids
  [
    'map family with columns',
    (d) => {
      d.locality_groups[0].families[1].columns = [{ name: 'x', column_schema: { type: 'INLINE', value: '"int"' } }];
    },
    'locality_groups[0].families[1].columns',
    /map-type family .* cannot also declare columns/,
  ],
  [
    'reference_layout on creation',
    (d) => {
      d.reference_layout = '1';
    },
    'reference_layout',
    /must be null when creating a table/,
  ],
  [
    'delete on creation',
    (d) => {
      info(d).delete = true;
    },
    'locality_groups[0].families[0].delete',
    /layout updates only/,
  ],
  [
    'renamed_from on creation',
    (d) => {
      lg0(d).renamed_from = 'old';
    },
    'locality_groups[0].renamed_from',
    /layout updates only/,
  ],
  [
    'duplicate explicit column ids',
    (d) => {
      info(d).columns[0].id = 4;
      info(d).columns[1].id = 4;
    },
    'locality_groups[0].families[0].columns[1].id',
    /id 4 is already used by locality_groups\[0\]\.families\[0\]\.columns\[0\]/,
  ],
  [
    'duplicate explicit locality group ids',
    (d) => {
      secondLg(d);
      lg0(d).id = 1;
      d.locality_groups[1].id = 1;
    },
    'locality_groups[1].id',
    /already used/,
  ],
  [
    'negative id',
    (d) => {
      info(d).id = -1;
    },
    'locality_groups[0].families[0].id',
    />= 0/,
  ],
  [
    'HBASE_NATIVE with a family named unlike its locality group',
    (d) => {
      d.column_name_translator = 'HBASE_NATIVE';
      d.locality_groups[0].families.pop();
    },
    'locality_groups[0].families[0].name',
    /HBASE_NATIVE needs every family to have the name of its locality group \("default"\)/,
  ],
  [
    'HBASE_NATIVE with a map family',
    (d) => {
      d.column_name_translator = 'HBASE_NATIVE';
      info(d).name = 'default';
    },
    'locality_groups[0].families[1].map_schema',
    /only group-type families/,
  ],
  // key formats
  [
    'FORMATTED keys without components',
    (d) => {
      d.keys_format.components = [];
    },
    'keys_format.components',
    /at least one component/,
  ],
  [
    'FORMATTED keys with a null salt',
    (d) => {
      d.keys_format.salt = null;
    },
    'keys_format.salt',
    /must not be null for FORMATTED/,
  ],
  [
    'salt hash_size of 0',
    (d) => {
      d.keys_format.salt = { hash_size: 0 };
    },
    'keys_format.salt.hash_size',
    /between 1 and 16, got 0/,
  ],
  [
    'salt hash_size of 17',
    (d) => {
      d.keys_format.salt = { hash_size: 17 };
    },
    'keys_format.salt.hash_size',
    /got 17/,
  ],
  [
    'nullable_start_index of 0',
    (d) => {
      d.keys_format.nullable_start_index = 0;
    },
    'keys_format.nullable_start_index',
    /between 1 and the number of components \(2\)/,
  ],
  [
    'nullable_start_index past the components',
    (d) => {
      d.keys_format.nullable_start_index = 3;
    },
    'keys_format.nullable_start_index',
    /got 3/,
  ],
  [
    'range_scan_start_index of 0',
    (d) => {
      d.keys_format.range_scan_start_index = 0;
    },
    'keys_format.range_scan_start_index',
    /between 1/,
  ],
  [
    'range_scan_start_index past the components',
    (d) => {
      d.keys_format.range_scan_start_index = 3;
    },
    'keys_format.range_scan_start_index',
    /got 3/,
  ],
  [
    'suppressed materialization must hash every component',
    (d) => {
      d.keys_format.salt = { suppress_key_materialization: true };
    },
    'keys_format.range_scan_start_index',
    /must equal the number of components \(2\) when suppress_key_materialization/,
  ],
  [
    'HASH encoding in a RowKeyFormat2',
    (d) => {
      keys2(d, { encoding: 'HASH' });
    },
    'keys_format.encoding',
    /HASH is not allowed in a RowKeyFormat2/,
  ],
  [
    'FORMATTED encoding alone is read as RowKeyFormat v1 and refused',
    (d) => {
      d.keys_format = { encoding: 'FORMATTED' };
    },
    'keys_format.encoding',
    /FORMATTED keys need a RowKeyFormat2/,
  ],
  [
    'RowKeyFormat v1 hash_size above 16',
    (d) => {
      d.keys_format = { encoding: 'HASH_PREFIX', hash_type: 'MD5', hash_size: 17 };
    },
    'keys_format.hash_size',
    /between 0 and 16/,
  ],
  [
    'RowKeyFormat v1 HASH without hash_type',
    (d) => {
      d.keys_format = { encoding: 'HASH', hash_size: 16 };
    },
    'keys_format.hash_type',
    /must be "MD5"/,
  ],
  [
    'locality_groups that is not an array',
    (d) => {
      d.locality_groups = 'none';
    },
    'locality_groups',
    /must be an array/,
  ],
];

for (const [what, change, path, says] of cases) {
  t.test(`rejects: ${what}`, async (t) => {
    const d = base();
    change(d);
    let err: unknown;
    try {
      parseLayout(d);
    } catch (e) {
      err = e;
    }
    t.ok(isRowgateError(err), 'a RowgateError is thrown');
    if (!isRowgateError(err)) return;
    t.equal(err.code, 'RG_ERR_BAD_LAYOUT');
    t.equal(err.status, 400);
    t.ok(err.message.startsWith(`${path}: `), `message names ${path}: ${err.message}`);
    t.match(err.message, says);
  });
}

t.test('the base layout of the rejection cases is itself valid', async (t) => {
  t.equal(parseLayout(base()).name, 't');
});

t.test('integers given as bigint (exact-JSON objects) are accepted', async (t) => {
  const d = base();
  d.max_filesize = 10n ** 10n;
  d.locality_groups[0].max_versions = 3n;
  t.equal(parseLayout(d).localityGroups[0]!.maxVersions, 3);
  t.same((parseLayout(d).desc as Json).max_filesize, { long: 10 ** 10 });
});

t.test('a column name may repeat in different families', async (t) => {
  const d = base();
  d.locality_groups[0].families.push({ name: 'other', columns: [{ name: 'a', column_schema: { type: 'INLINE', value: '"int"' } }] });
  t.ok(parseLayout(d).families.has('other'));
});

t.test('HBASE_NATIVE accepts group families named like their locality group', async (t) => {
  const d = base();
  d.column_name_translator = 'HBASE_NATIVE';
  d.locality_groups[0].families = [{ name: 'default', columns: [{ name: 'q', column_schema: { type: 'INLINE', value: '"int"' } }] }];
  t.ok(parseLayout(d).families.has('default'));
});

t.test('HASH_PREFIX keys accept hash_size 0 and a null hash_type, as Kiji does', async (t) => {
  const d = base();
  d.keys_format = { encoding: 'HASH_PREFIX', hash_size: 0 };
  t.same(parseLayout(d).keyFormat, { encoding: 'HASH_PREFIX', hashSize: 0 });
});

t.test('a JSON text that is not an object is rejected', async (t) => {
  t.throws(() => parseLayout('[1, 2]'), { code: 'RG_ERR_BAD_LAYOUT', message: /^layout: must be a JSON object/ });
  t.throws(() => parseLayout('"x"'), { code: 'RG_ERR_BAD_LAYOUT', message: /^layout: must be a JSON object/ });
});
