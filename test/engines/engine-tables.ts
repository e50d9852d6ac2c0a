/**
 * The tables the engine read-back checks export (issue #30 item 5): one table for each of the four
 * row key formats (RAW, HASH, HASH_PREFIX, FORMATTED with a STRING, an INTEGER and a LONG
 * component, the last two nullable), each with a column of every cell type a layout allows
 * (INLINE string, long, int, double, float, boolean, bytes, record, array, map, union, enum,
 * fixed; nested records with a long near 2^63, arrays of records, maps of arrays, a nullable
 * record, a union of several types, a record that refers to itself; COUNTER; AVRO with a default
 * reader; RAW_BYTES) and four map families (string, long,
 * record and counter values). ROWS rows a table (4 x 60 = 240 in all: every value shape below
 * occurs, and Python reads a check file's 8-13 files in 0.6 s of CPU), written through POST as a
 * user would, with cells left out on a pattern so every column has nulls, and some columns and
 * map qualifiers holding two versions.
 */
import { parseLayout } from '../../lib/model/layout/layout.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { json, raw, startGateway, type Harness } from '../http/harness.js';

export const ROWS = 60;

const RECORD = {
  type: 'record',
  name: 'Visit',
  fields: [
    { name: 'page', type: 'string' },
    { name: 'hits', type: 'long' },
    { name: 'ref', type: ['null', 'string'], default: null },
    { name: 'tags', type: { type: 'array', items: 'string' } },
  ],
};

/**
 * Nested types (issue #30: records, arrays, maps and unions as the formats' nested types): a record
 * holding a record (with a long near 2^63, a nullable string and a map of arrays), a union of two
 * types, an enum and a fixed; an array of records; a map of arrays; a nullable record; a union of
 * null, long, string and a namespaced record (its branch named `geo.Point`); and a record that
 * refers to itself (no finite column type: JSON text).
 */
const NESTED = {
  type: 'record',
  name: 'Outer',
  fields: [
    { name: 'id', type: 'long' },
    {
      name: 'inner',
      type: {
        type: 'record',
        name: 'Inner',
        fields: [
          { name: 'when', type: 'long' },
          { name: 'label', type: ['null', 'string'] },
          { name: 'scores', type: { type: 'map', values: { type: 'array', items: 'long' } } },
        ],
      },
    },
    { name: 'either', type: ['int', 'string'] },
    { name: 'shade', type: { type: 'enum', name: 'Shade', symbols: ['DARK', 'LIGHT'] } },
    { name: 'tag', type: { type: 'fixed', name: 'Tag', size: 2 } },
  ],
};
const ITEMS = {
  type: 'array',
  items: {
    type: 'record',
    name: 'Item',
    fields: [
      { name: 'sku', type: 'string' },
      { name: 'qty', type: 'int' },
      { name: 'price', type: ['null', 'double'] },
    ],
  },
};
const MAYBE = [
  'null',
  {
    type: 'record',
    name: 'Maybe',
    fields: [
      { name: 'n', type: 'long' },
      { name: 's', type: 'string' },
    ],
  },
];
const MULTI = [
  'null',
  'long',
  'string',
  {
    type: 'record',
    name: 'Point',
    namespace: 'geo',
    fields: [
      { name: 'x', type: 'double' },
      { name: 'y', type: 'double' },
    ],
  },
];
const SELF = {
  type: 'record',
  name: 'Node',
  fields: [
    { name: 'v', type: 'long' },
    { name: 'next', type: ['null', 'Node'] },
  ],
};

/** The group family `t`: column name -> its column_schema. */
const COLUMNS: Record<string, object> = {
  str: { storage: 'UID', type: 'INLINE', value: '"string"' },
  lng: { storage: 'UID', type: 'INLINE', value: '"long"' },
  int: { storage: 'UID', type: 'INLINE', value: '"int"' },
  dbl: { storage: 'UID', type: 'INLINE', value: '"double"' },
  flt: { storage: 'UID', type: 'INLINE', value: '"float"' },
  bool: { storage: 'UID', type: 'INLINE', value: '"boolean"' },
  byt: { storage: 'UID', type: 'INLINE', value: '"bytes"' },
  rec: { storage: 'UID', type: 'INLINE', value: JSON.stringify(RECORD) },
  arr: { storage: 'UID', type: 'INLINE', value: '{"type": "array", "items": "long"}' },
  map: { storage: 'UID', type: 'INLINE', value: '{"type": "map", "values": "double"}' },
  uni: { storage: 'UID', type: 'INLINE', value: '["null", "string"]' },
  uni2: { storage: 'UID', type: 'INLINE', value: '["int", "string"]' },
  unil: { storage: 'UID', type: 'INLINE', value: '["long", "null"]' },
  enm: { storage: 'UID', type: 'INLINE', value: '{"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}' },
  fix: { storage: 'UID', type: 'INLINE', value: '{"type": "fixed", "name": "Quad", "size": 4}' },
  nst: { storage: 'UID', type: 'INLINE', value: JSON.stringify(NESTED) },
  itm: { storage: 'UID', type: 'INLINE', value: JSON.stringify(ITEMS) },
  mpa: { storage: 'UID', type: 'INLINE', value: '{"type": "map", "values": {"type": "array", "items": "long"}}' },
  may: { storage: 'UID', type: 'INLINE', value: JSON.stringify(MAYBE) },
  mul: { storage: 'UID', type: 'INLINE', value: JSON.stringify(MULTI) },
  slf: { storage: 'UID', type: 'INLINE', value: JSON.stringify(SELF) },
  cnt: { type: 'COUNTER', storage: 'FINAL' },
  avr: { storage: 'UID', type: 'AVRO', avro_validation_policy: 'DEVELOPER', default_reader: { json: '"string"' } },
  raw: { type: 'RAW_BYTES' },
};

/** The map families: name -> map_schema. */
const MAP_FAMILIES: Record<string, object> = {
  mstr: { storage: 'UID', type: 'INLINE', value: '"string"' },
  mlng: { storage: 'UID', type: 'INLINE', value: '"long"' },
  mrec: { storage: 'UID', type: 'INLINE', value: JSON.stringify({ ...RECORD, name: 'MapVisit' }) },
  mcnt: { type: 'COUNTER', storage: 'FINAL' },
};

export interface EngineTable {
  readonly name: string;
  readonly encoding: 'RAW' | 'HASH' | 'HASH_PREFIX' | 'FORMATTED';
  readonly keysFormat: object;
  /** Row i's entity id, as a revision 3 POST takes it. */
  entityId(i: number): unknown[];
}

export const FORMATTED_COMPONENTS = [
  { name: 's', type: 'STRING' },
  { name: 'i', type: 'INTEGER' },
  { name: 'l', type: 'LONG' },
] as const;

export const TABLES: readonly EngineTable[] = [
  { name: 'raw_keys', encoding: 'RAW', keysFormat: { encoding: 'RAW' }, entityId: (i) => [`raw ${i} \u00e9`] },
  { name: 'hash_keys', encoding: 'HASH', keysFormat: { encoding: 'HASH', hash_type: 'MD5', hash_size: 16 }, entityId: (i) => [`hashed ${i}`] },
  { name: 'prefix_keys', encoding: 'HASH_PREFIX', keysFormat: { encoding: 'HASH_PREFIX', hash_type: 'MD5', hash_size: 2 }, entityId: (i) => [`prefixed ${i}`] },
  {
    name: 'formatted_keys',
    encoding: 'FORMATTED',
    keysFormat: {
      'org.kiji.schema.avro.RowKeyFormat2': {
        encoding: 'FORMATTED',
        salt: { hash_size: 2 },
        range_scan_start_index: 1,
        nullable_start_index: 1,
        components: FORMATTED_COMPONENTS,
      },
    },
    // Every third row lacks the LONG, every fifth the INTEGER too (nullable components absent).
    entityId: (i) => {
      const id: unknown[] = [`user ${i} \u2603`, i % 2 === 0 ? -2147483648 + i : 2147483647 - i, 9007199254740993n * BigInt(i % 2 === 0 ? 1 : -1) + BigInt(i)];
      return i % 5 === 0 ? id.slice(0, 1) : i % 3 === 0 ? id.slice(0, 2) : id;
    },
  },
];

/** A table's layout, as created. */
export function layoutOf(table: EngineTable): object {
  return {
    name: table.name,
    keys_format: table.keysFormat,
    locality_groups: [
      {
        name: 'default',
        in_memory: false,
        max_versions: 5,
        ttl_seconds: 2147483647,
        compression_type: 'NONE',
        families: [
          { name: 't', columns: Object.entries(COLUMNS).map(([name, column_schema]) => ({ name, column_schema })) },
          ...Object.entries(MAP_FAMILIES).map(([name, map_schema]) => ({ name, map_schema })),
        ],
      },
    ],
    version: 'layout-1.3.0',
  };
}

/** Avro JSON of bytes: a string of code points 0-255. */
const avroBytes = (b: Buffer): string => b.toString('latin1');

/** Row i's cells in a revision 3 POST body: every column on its own pattern of presence. */
function cellsOf(i: number): Record<string, Record<string, { timestamp: number; value: unknown }[]>> {
  const at = (value: unknown, timestamp = 1_000 + i) => [{ timestamp, value }];
  const t: Record<string, { timestamp: number; value: unknown }[]> = {};
  const big = 9007199254740993n;
  if (i % 7 !== 1) t['str'] = i % 4 === 0 ? [...at(`s ${i}\r\n\t"q" \u00fc \u{1F600}`, 2_000 + i), ...at('older', 5)] : at(i % 9 === 0 ? '' : `s ${i}`);
  if (i % 6 !== 2) t['lng'] = at(i % 2 === 0 ? big * BigInt(i) : -big - BigInt(i));
  if (i % 5 !== 3) t['int'] = at(i % 3 === 0 ? -2147483648 + i : 2147483647 - i * 1000);
  if (i % 8 !== 4) t['dbl'] = at([0.1 * i, -1e300, 5e-324, 123456789.125, 1 / 3][i % 5]);
  if (i % 9 !== 5) t['flt'] = at([0.1, 1.5, -3.25e10, 16777217, 1e-7][i % 5]! * (i + 1));
  if (i % 4 !== 1) t['bool'] = at(i % 3 === 0);
  if (i % 5 !== 1) t['byt'] = at(avroBytes(Buffer.from(Array.from({ length: i % 7 === 0 ? 0 : 8 + (i % 5) }, (_, k) => (i * 37 + k * 101) % 256))));
  if (i % 3 !== 2)
    t['rec'] = at({ page: `/p/${i}`, hits: big + BigInt(i), ref: i % 2 === 0 ? null : { string: `r${i}` }, tags: i % 4 === 0 ? [] : ['a', `t${i}`] });
  if (i % 4 !== 2) t['arr'] = at(i % 5 === 0 ? [] : [i, -big, big * 2n]);
  if (i % 5 !== 4) t['map'] = at(i % 6 === 0 ? {} : { a: 0.5 * i, 'k \u00e9': -i });
  if (i % 3 !== 1) t['uni'] = at(i % 4 === 0 ? null : `u ${i}`);
  if (i % 5 !== 2) t['unil'] = [...at(i % 3 === 0 ? null : big * BigInt(i)), ...at(i % 2 === 0 ? -i : null, 7)];
  if (i % 7 !== 3) t['uni2'] = at(i % 2 === 0 ? { int: i } : { string: `v${i}` });
  if (i % 6 !== 5) t['enm'] = at(['RED', 'GREEN', 'BLUE'][i % 3]);
  if (i % 8 !== 6) t['fix'] = at(avroBytes(Buffer.from([i % 256, 0, 255, (i * 7) % 256])));
  const max = 9223372036854775807n;
  if (i % 4 !== 3)
    t['nst'] = at({
      id: i % 2 === 0 ? max - BigInt(i) : -max - 1n + BigInt(i),
      inner: { when: max - 1n, label: i % 3 === 0 ? null : { string: `l${i}` }, scores: i % 5 === 0 ? {} : { a: [BigInt(i), -max], [`b${i}`]: [] } },
      either: i % 2 === 0 ? { int: -i } : { string: `e${i}` },
      shade: i % 2 === 0 ? 'DARK' : 'LIGHT',
      tag: avroBytes(Buffer.from([i % 256, 255 - (i % 256)])),
    });
  if (i % 3 !== 1)
    t['itm'] = at(
      i % 4 === 0 ? [] : Array.from({ length: 1 + (i % 3) }, (_, k) => ({ sku: `k${i}.${k}`, qty: k - i, price: k === 1 ? null : { double: i + 0.25 } })),
    );
  if (i % 5 !== 1) t['mpa'] = at(i % 6 === 0 ? {} : { x: [max, BigInt(-i)], y: [], [`z${i}`]: [BigInt(i)] });
  if (i % 6 !== 4) t['may'] = [...at(i % 3 === 0 ? null : { n: max - BigInt(i), s: `m${i}` }), ...at({ n: 1, s: 'old' }, 9)];
  if (i % 7 !== 2) t['mul'] = at([null, { long: max - BigInt(i) }, { string: `w${i}` }, { 'geo.Point': { x: i / 4, y: -i } }][i % 4]);
  if (i % 5 !== 3) t['slf'] = at({ v: i, next: i % 2 === 0 ? null : { Node: { v: max, next: null } } });
  if (i % 5 !== 2) t['cnt'] = at(i % 2 === 0 ? big + BigInt(i) : -i);
  if (i % 4 !== 3) t['avr'] = at(`avro ${i}`);
  if (i % 6 !== 1) t['raw'] = at(avroBytes(Buffer.from([i % 256, 10, 13, 0])));
  const cells: Record<string, Record<string, { timestamp: number; value: unknown }[]>> = { t };
  if (i % 3 !== 0) cells['mstr'] = Object.fromEntries(Array.from({ length: 1 + (i % 3) }, (_, k) => [`q${k} ${i % 4}`, at(`m ${i}.${k}`)]));
  if (i % 4 !== 0) cells['mlng'] = { n: at(big * BigInt(i)), [`m${i % 2}`]: [...at(i, 3_000), ...at(-1, 2)] };
  if (i % 5 !== 0) cells['mrec'] = { v: at({ page: `m${i}`, hits: i, ref: null, tags: [`x${i}`] }) };
  if (i % 2 === 0) cells['mcnt'] = { hits: at(BigInt(i) * big), misses: at(-i) };
  return cells;
}

/** JSON text of a POST body holding bigints exactly. */
function bodyText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `@@${v}@@` : v)).replace(/"@@(-?[0-9]+)@@"/g, '$1');
}

/**
 * A gateway over a fresh LMDB store holding the four tables, ROWS rows each (written by POST); with
 * `dataDir` the store is there, so `rowgate export --data` can read it too.
 */
export async function engineGateway(dataDir?: string): Promise<Harness> {
  const h = await startGateway({}, dataDir === undefined ? {} : { store: new LmdbStore({ path: dataDir, noSync: true }) });
  try {
    for (const table of TABLES) {
      await h.store.createTable('default', parseLayout(layoutOf(table)));
      const rows = Array.from({ length: ROWS }, (_, i) => ({ entityId: table.entityId(i), cells: cellsOf(i) }));
      const posted = await raw(h.base, 'POST', rowsPath(table.name), bodyText(rows), json);
      if (posted.status !== 200) throw new Error(`POST of ${table.name}'s rows: ${posted.status} ${posted.body}`);
    }
  } catch (e) {
    await h.close();
    throw e;
  }
  return h;
}

export function rowsPath(table: string): string {
  return `/v1/instances/default/tables/${table}/rows`;
}
