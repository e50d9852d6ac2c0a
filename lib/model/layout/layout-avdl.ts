/**
 * The records of Kiji's Layout.avdl as data (docs/data-model.md, "Layouts" and "Key formats"), in avdl field order.
 * One description drives both the strict decoder and the Avro JSON encoder (layout-avro-json.ts),
 * so what we accept and what we serve cannot drift apart.
 */

export const NAMESPACE = 'org.kiji.schema.avro.';

export type PrimitiveName = 'null' | 'boolean' | 'int' | 'long' | 'string';
export interface EnumType {
  readonly kind: 'enum';
  readonly name: string;
  readonly symbols: readonly string[];
}
export interface ArrayType {
  readonly kind: 'array';
  readonly items: AvdlType;
}
export interface UnionType {
  readonly kind: 'union';
  readonly branches: readonly AvdlType[];
}
export interface FieldSpec {
  readonly name: string;
  readonly type: AvdlType;
  /** Present when the field has an avdl default; the value is in decoded (internal) form. */
  readonly default?: unknown;
}
export interface RecordType {
  readonly kind: 'record';
  readonly name: string;
  readonly fields: readonly FieldSpec[];
}
export type AvdlType = PrimitiveName | EnumType | ArrayType | UnionType | RecordType;

const optional = (t: AvdlType): UnionType => ({ kind: 'union', branches: ['null', t] });
const array = (items: AvdlType): ArrayType => ({ kind: 'array', items });
const enumOf = (name: string, symbols: string[]): EnumType => ({ kind: 'enum', name, symbols });
const record = (name: string, fields: FieldSpec[]): RecordType => ({ kind: 'record', name, fields });
const req = (name: string, type: AvdlType): FieldSpec => ({ name, type });
const opt = (name: string, type: AvdlType, dflt: unknown): FieldSpec => ({ name, type, default: dflt });

const HashType = enumOf('HashType', ['MD5']);
const RowKeyEncoding = enumOf('RowKeyEncoding', ['RAW', 'HASH', 'HASH_PREFIX', 'FORMATTED']);

const AvroSchema = record('AvroSchema', [opt('uid', optional('long'), null), opt('json', optional('string'), null)]);

const CellSchema = record('CellSchema', [
  opt('storage', enumOf('SchemaStorage', ['HASH', 'UID', 'FINAL']), 'HASH'),
  req('type', enumOf('SchemaType', ['INLINE', 'CLASS', 'COUNTER', 'AVRO', 'RAW_BYTES', 'PROTOBUF'])),
  opt('value', optional('string'), null),
  opt('avro_validation_policy', enumOf('AvroValidationPolicy', ['STRICT', 'DEVELOPER', 'SCHEMA_1_0', 'NONE']), 'SCHEMA_1_0'),
  opt('specific_reader_schema_class', optional('string'), null),
  opt('default_reader', optional(AvroSchema), null),
  opt('readers', optional(array(AvroSchema)), null),
  opt('written', optional(array(AvroSchema)), null),
  opt('writers', optional(array(AvroSchema)), null),
  opt('protobuf_full_name', optional('string'), null),
  opt('protobuf_class_name', optional('string'), null),
]);

/** id, name, aliases, enabled, description: the head every element record shares. */
const head = (): FieldSpec[] => [
  opt('id', 'int', 0),
  req('name', 'string'),
  opt('aliases', array('string'), []),
  opt('enabled', 'boolean', true),
  opt('description', 'string', ''),
];
/** delete, renamed_from: the diff fields every element record ends with. */
const diff = (): FieldSpec[] => [opt('delete', 'boolean', false), opt('renamed_from', optional('string'), null)];

const ColumnDesc = record('ColumnDesc', [...head(), req('column_schema', CellSchema), ...diff()]);

const FamilyDesc = record('FamilyDesc', [...head(), opt('map_schema', optional(CellSchema), null), opt('columns', array(ColumnDesc), []), ...diff()]);

const LocalityGroupDesc = record('LocalityGroupDesc', [
  ...head(),
  req('in_memory', 'boolean'),
  req('max_versions', 'int'),
  req('ttl_seconds', 'int'),
  opt('block_size', optional('int'), null),
  opt('bloom_type', optional(enumOf('BloomType', ['NONE', 'ROW', 'ROWCOL'])), null),
  req('compression_type', enumOf('CompressionType', ['NONE', 'GZ', 'LZO', 'SNAPPY'])),
  opt('families', array(FamilyDesc), []),
  ...diff(),
]);

const HashSpec = record('HashSpec', [opt('hash_type', HashType, 'MD5'), opt('hash_size', 'int', 16), opt('suppress_key_materialization', 'boolean', false)]);

export const RowKeyFormat1 = record('RowKeyFormat', [req('encoding', RowKeyEncoding), opt('hash_type', optional(HashType), null), opt('hash_size', 'int', 0)]);

export const RowKeyFormat2 = record('RowKeyFormat2', [
  req('encoding', RowKeyEncoding),
  // The field default (2 bytes) differs from HashSpec's own hash_size default (16): docs/data-model.md, "FORMATTED keys".
  opt('salt', { kind: 'union', branches: [HashSpec, 'null'] }, { hash_type: 'MD5', hash_size: 2, suppress_key_materialization: false }),
  opt('range_scan_start_index', 'int', 1),
  opt('nullable_start_index', 'int', 1),
  opt('components', array(record('RowKeyComponent', [req('name', 'string'), req('type', enumOf('ComponentType', ['STRING', 'INTEGER', 'LONG']))])), []),
]);

export const TableLayoutDesc = record('TableLayoutDesc', [
  req('name', 'string'),
  opt('max_filesize', optional('long'), null),
  opt('memstore_flushsize', optional('long'), null),
  opt('description', 'string', ''),
  // Declaration order matters: untagged JSON is tried as RowKeyFormat (v1) first.
  req('keys_format', { kind: 'union', branches: [RowKeyFormat1, RowKeyFormat2] }),
  opt('locality_groups', array(LocalityGroupDesc), []),
  opt('column_name_translator', enumOf('ColumnNameTranslator', ['SHORT', 'IDENTITY', 'HBASE_NATIVE']), 'SHORT'),
  req('version', 'string'),
  opt('layout_id', optional('string'), null),
  opt('reference_layout', optional('string'), null),
]);

// ------------------------------------------------------------ decoded (internal) shapes

export interface AvroSchemaRec {
  uid: number | null;
  json: string | null;
}
export interface CellSchemaRec {
  storage: 'HASH' | 'UID' | 'FINAL';
  type: 'INLINE' | 'CLASS' | 'COUNTER' | 'AVRO' | 'RAW_BYTES' | 'PROTOBUF';
  value: string | null;
  avro_validation_policy: 'STRICT' | 'DEVELOPER' | 'SCHEMA_1_0' | 'NONE';
  specific_reader_schema_class: string | null;
  default_reader: AvroSchemaRec | null;
  readers: AvroSchemaRec[] | null;
  written: AvroSchemaRec[] | null;
  writers: AvroSchemaRec[] | null;
  protobuf_full_name: string | null;
  protobuf_class_name: string | null;
}
export interface ElementRec {
  id: number;
  name: string;
  aliases: string[];
  enabled: boolean;
  description: string;
  delete: boolean;
  renamed_from: string | null;
}
export interface ColumnRec extends ElementRec {
  column_schema: CellSchemaRec;
}
export interface FamilyRec extends ElementRec {
  map_schema: CellSchemaRec | null;
  columns: ColumnRec[];
}
export interface LocalityGroupRec extends ElementRec {
  in_memory: boolean;
  max_versions: number;
  ttl_seconds: number;
  block_size: number | null;
  bloom_type: 'NONE' | 'ROW' | 'ROWCOL' | null;
  compression_type: 'NONE' | 'GZ' | 'LZO' | 'SNAPPY';
  families: FamilyRec[];
}
export interface HashSpecRec {
  hash_type: 'MD5';
  hash_size: number;
  suppress_key_materialization: boolean;
}
export interface RowKeyFormat1Rec {
  encoding: string;
  hash_type: 'MD5' | null;
  hash_size: number;
}
export interface RowKeyFormat2Rec {
  encoding: string;
  salt: HashSpecRec | null;
  range_scan_start_index: number;
  nullable_start_index: number;
  components: { name: string; type: 'STRING' | 'INTEGER' | 'LONG' }[];
}
export interface TableLayoutDescRec {
  name: string;
  max_filesize: number | null;
  memstore_flushsize: number | null;
  description: string;
  /** A Tagged value: which of RowKeyFormat / RowKeyFormat2 the JSON resolved to. */
  keys_format: { readonly branch: string; readonly value: unknown };
  locality_groups: LocalityGroupRec[];
  column_name_translator: 'SHORT' | 'IDENTITY' | 'HBASE_NATIVE';
  version: string;
  layout_id: string | null;
  reference_layout: string | null;
}
