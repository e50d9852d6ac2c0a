/**
 * The typed shapes shared by the model, the stores and the HTTP layer. The parsers that produce
 * them live in their own files (layout.ts, entity-id.ts, read-request.ts, ...).
 */

// ---------------------------------------------------------------- row keys and entity ids

export type ComponentType = 'STRING' | 'INTEGER' | 'LONG';

export interface RowKeyComponentSpec {
  readonly name: string;
  readonly type: ComponentType;
}

/**
 * The compiled key format of a table. RAW comes from RowKeyFormat (v1) or RowKeyFormat2;
 * HASH and HASH_PREFIX only from v1; FORMATTED only from v2 (docs/data-model.md, "Key formats").
 */
export type RowKeyFormat =
  | { readonly encoding: 'RAW' }
  | { readonly encoding: 'HASH' }
  | { readonly encoding: 'HASH_PREFIX'; readonly hashSize: number }
  | {
      readonly encoding: 'FORMATTED';
      readonly hashSize: number;
      readonly suppressMaterialization: boolean;
      readonly rangeScanStartIndex: number;
      readonly nullableStartIndex: number;
      readonly components: readonly RowKeyComponentSpec[];
    };

/**
 * One entity-id component value: STRING -> string, INTEGER -> number (int32),
 * LONG -> bigint (exact 64-bit), trailing nullable components -> null.
 */
export type ComponentValue = string | number | bigint | null;

/** A wildcard component (`[]` in the eid text): matches every value of that component. */
export const WILDCARD: unique symbol = Symbol('wildcard');
export type Wildcard = typeof WILDCARD;

/**
 * A parsed entity id before it is resolved against a table:
 * - `components`: a JSON array form (may contain wildcards);
 * - `rowKey`: a raw row key given as `rowkey=`/`rowkey_hex=`/`hbase=`/`hbase_hex=` (or a hex path segment).
 */
export type EntityIdInput =
  | { readonly kind: 'components'; readonly components: readonly (ComponentValue | Wildcard)[]; readonly text: string }
  | { readonly kind: 'rowKey'; readonly rowKey: Buffer; readonly text: string };

// ---------------------------------------------------------------- layouts

export type CellType = 'INLINE' | 'AVRO' | 'COUNTER' | 'RAW_BYTES' | 'CLASS' | 'PROTOBUF';
export type SchemaStorage = 'HASH' | 'UID' | 'FINAL';
export type AvroValidationPolicy = 'STRICT' | 'DEVELOPER' | 'SCHEMA_1_0' | 'NONE';

/** An Avro schema reference of a layout: exactly one of uid (schema-table id) or json. */
export interface AvroSchemaRef {
  readonly uid?: number;
  readonly json?: string;
}

export interface CellSchemaSpec {
  readonly type: CellType;
  readonly storage: SchemaStorage;
  /** INLINE: the Avro schema JSON text; CLASS: a class name; otherwise undefined. */
  readonly value?: string;
  readonly avroValidationPolicy: AvroValidationPolicy;
  readonly defaultReader?: AvroSchemaRef;
  readonly readers: readonly AvroSchemaRef[];
  readonly writers: readonly AvroSchemaRef[];
}

export interface LocalityGroupLayout {
  readonly id: number;
  readonly name: string;
  readonly inMemory: boolean;
  /** Versions kept per column (per map key); 2147483647 = all. */
  readonly maxVersions: number;
  /** Cell lifetime against the cell timestamp; 2147483647 = forever. */
  readonly ttlSeconds: number;
  readonly families: readonly FamilyLayout[];
}

export interface ColumnLayout {
  readonly id: number;
  readonly name: string;
  readonly schema: CellSchemaSpec;
}

export interface FamilyLayout {
  readonly id: number;
  readonly name: string;
  readonly localityGroup: string;
  readonly maxVersions: number;
  readonly ttlSeconds: number;
  /** Map-type family: any qualifier, all cells of `mapSchema`. */
  readonly mapSchema?: CellSchemaSpec;
  /** Group-type family: the declared columns, in declaration order. Empty for map families. */
  readonly columns: readonly ColumnLayout[];
}

/** A validated, normalized table layout. */
export interface TableLayout {
  readonly name: string;
  /** The normalized TableLayoutDesc JSON (defaults filled, ids assigned): what GET table serves. */
  readonly desc: Record<string, unknown>;
  readonly keyFormat: RowKeyFormat;
  readonly localityGroups: readonly LocalityGroupLayout[];
  /** Every family by name (aliases are not keys). */
  readonly families: ReadonlyMap<string, FamilyLayout>;
}

/** TTL and version limit value meaning "no limit" (Integer.MAX_VALUE, as in HBase). */
export const FOREVER = 2147483647;

// ---------------------------------------------------------------- read requests

/** One selected column: a whole family (qualifier undefined) or one family:qualifier. */
export interface ColumnSelector {
  readonly family: string;
  readonly qualifier?: string;
}

/**
 * A cell timestamp in ms, 0..2^63-1 exact: a number when it is a safe integer, a bigint only
 * above 2^53-1 (lib/model/cells/timestamp.ts). Read bounds may also be Infinity (no bound).
 */
export type Timestamp = number | bigint;

/**
 * What to return of each row: which columns, how many versions per column, and which
 * timestamps. Stores push all three down so unselected cells are never decoded.
 */
export interface ReadSpec {
  /** undefined = every column (`cols=*`). */
  readonly columns?: readonly ColumnSelector[];
  /** Versions per column (per qualifier), >= 1. */
  readonly maxVersions: number;
  /** Half-open [minTimestamp, maxTimestamp) in ms; maxTimestamp END_OF_TIME (Infinity) = no upper bound. */
  readonly minTimestamp: Timestamp;
  readonly maxTimestamp: Timestamp;
}

/** `limit`: -1 = all rows. */
export type RowLimit = number;

// ---------------------------------------------------------------- cells and rows

/** A cell as a store returns it: value already in its wire JSON text. */
export interface CellOut {
  readonly family: string;
  readonly qualifier: string;
  readonly timestamp: Timestamp;
  /** Schema-table id of the schema the value is written in (the long id for counters). */
  readonly schemaId: number;
  /** The value as compact JSON text (Avro JSON encoding; counters as a number). */
  readonly json: string;
}

/** A row as a store returns it: the row key and its selected cells, sorted by family, qualifier, newest first. */
export interface RowOut {
  readonly rowKey: Buffer;
  readonly cells: readonly CellOut[];
}

// ---------------------------------------------------------------- JSON with exact integers

/**
 * A parsed JSON value in which integers outside the safe range are bigint, so 64-bit
 * longs and counters survive parsing exactly (exact-json.ts).
 */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

// ---------------------------------------------------------------- schema table

/** A schema-table entry: the id and the schema's canonical JSON text. */
export interface SchemaEntry {
  readonly id: number;
  readonly json: string;
}

/**
 * The schema table of one instance (docs/data-model.md, "The schema table"): ids 0-7 pre-registered
 * (string, bytes, int, long, float, double, boolean, null), new schemas get the next id,
 * one id maps to one schema forever. Stores implement persistence; schema-table.ts has the
 * shared rules and an in-memory implementation.
 */
export interface SchemaTable {
  /** The canonical schema JSON of an id, or undefined when the id is unknown. */
  schemaOf(id: number): Promise<string | undefined>;
  /** The id of a schema (canonical JSON text), registering it if new. */
  idOf(canonicalJson: string): Promise<number>;
  entries(): Promise<SchemaEntry[]>;
}

// ---------------------------------------------------------------- writes

/** A cell ready for the store: validated against the layout, value already in wire JSON. */
export type EncodedCell =
  | {
      readonly kind: 'value';
      readonly family: string;
      readonly qualifier: string;
      readonly timestamp?: Timestamp;
      readonly schemaId: number;
      readonly json: string;
    }
  | { readonly kind: 'counter-set'; readonly family: string; readonly qualifier: string; readonly timestamp?: Timestamp; readonly value: bigint }
  | { readonly kind: 'counter-increment'; readonly family: string; readonly qualifier: string; readonly delta: bigint };

/** All cells written to one row in one request. Cells without timestamp get the row's server time. */
export interface RowWrite {
  readonly rowKey: Buffer;
  readonly cells: readonly EncodedCell[];
}
