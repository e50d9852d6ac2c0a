/**
 * The demo data a fresh data directory is seeded with (docs/cli.md, "serve"): instance `default`, table
 * `users` (demo-layouts.ts), rows generated deterministically from the user id, so every machine
 * serves the same demo rows. Rows are written through the normal path (encodeRowInput ->
 * encodeCell -> Store.write), never straight into the store.
 *
 * A generated row is already in the canonical form a revision 3 export writes: families,
 * qualifiers and map keys sorted, versions newest first, explicit timestamps, and (with
 * `writerSchemas`) the schema id of every cell. Rows still have to be sorted by row key.
 */
import { parseLayout } from '../model/layout/layout.js';
import { USERS_LAYOUT_JSON } from '../model/layout/demo-layouts.js';
import { encodeRowInput } from '../model/cells/row-input.js';
import { SCHEMA_ID } from '../model/avro/schema-table.js';
import type { JsonValue, RowWrite } from '../model/types.js';
import type { Store } from '../store/store.js';

export const DEMO_INSTANCE = 'default';
export const DEMO_TABLE = 'users';
/** Rows in the demo table of a fresh data directory. */
export const DEMO_ROW_COUNT = 1000;
/** First demo user id; ids are consecutive. */
export const DEMO_FIRST_UID = 1000;
/** 2023-11-14T22:13:20Z: demo timestamps start here, so they never depend on the clock. */
export const DEMO_BASE_TIMESTAMP = 1_700_000_000_000;

const DAY_MS = 86_400_000;
const FIRST_NAMES = [
  'Ada',
  'Alan',
  'Grace',
  'Edsger',
  'Barbara',
  'Donald',
  'Frances',
  'Ken',
  'Margaret',
  'Niklaus',
  'Radia',
  'José',
  'Zoë',
  'Åsa',
  'Chidi',
  'Mei',
];
const LAST_NAMES = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Allen',
  'Thompson',
  'Hamilton',
  'Wirth',
  'Perlman',
  "O'Brien",
  'Nakamura',
  'Müller',
  'Okafor',
  'Zhang',
];
const TAGS = ['admin', 'beta', 'early-adopter', 'newsletter', 'premium', 'support', 'trial', 'verified'];
const STREETS = ['Main St', 'High St', 'Elm Ave', 'Station Rd', 'Harbour Way', 'Mill Lane'];
const CITIES = ['Lisbon', 'Osaka', 'Toronto', 'Nairobi', 'Berlin', 'Valparaíso', 'Perth', 'Reykjavík'];
const SITES = ['android', 'api', 'ios', 'web'];

/** Schema-table ids of the two non-primitive demo columns, for cells with writer_schema. */
export interface DemoWriterSchemas {
  readonly tags: number;
  readonly address: number;
}

export interface DemoRowOptions {
  /** Changes every generated value; default 1. */
  readonly seed?: number;
  /** Give every cell its writer_schema id (the column's schema), as an export writes it. */
  readonly writerSchemas?: DemoWriterSchemas;
}

/** mulberry32 seeded from (seed, uid): each row is independent of which other rows exist. */
function rowRandom(seed: number, uid: number): () => number {
  let a = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(uid + 0x7f4a7c15, 0xc2b2ae35);
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Cell = { [key: string]: JsonValue };

/**
 * The demo row of user `uid` in the revision 3 POST shape (what `rowgate import` reads):
 * info:name (1-2 versions), info:email, info:age (1-3 versions), info:score (1-4 versions),
 * info:tags, info:address (most rows) and 1-3 login counters.
 */
export function demoRow(uid: number, options: DemoRowOptions = {}): JsonValue {
  const rnd = rowRandom(options.seed ?? 1, uid);
  const int = (n: number): number => Math.floor(rnd() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  const ws = options.writerSchemas;
  const base = DEMO_BASE_TIMESTAMP + (uid % 100_000) * 1000;
  /** `count` versions, newest first, on distinct days before `base`. */
  const versions = (count: number, value: (i: number) => JsonValue, schemaId: number | undefined): Cell[] => {
    const cells: Cell[] = [];
    for (let i = 0; i < count; i++) {
      const cell: Cell = { timestamp: base - i * DAY_MS - int(1000), value: value(i) };
      if (ws !== undefined && schemaId !== undefined) cell.writer_schema = schemaId;
      cells.push(cell);
    }
    return cells;
  };

  const first = pick(FIRST_NAMES);
  const last = pick(LAST_NAMES);
  const info: { [q: string]: JsonValue } = {};
  if (rnd() < 0.85) {
    const zip = rnd() < 0.3 ? null : { string: String(10000 + int(90000)) };
    const address = { street: `${1 + int(200)} ${pick(STREETS)}`, city: pick(CITIES), zip };
    info.address = versions(1, () => address, ws?.address);
  }
  const age = 18 + int(60);
  info.age = versions(1 + int(3), (i) => age - i, SCHEMA_ID.int);
  info.email = versions(1, () => `${first}.${last}${uid}@example.org`.toLowerCase().replace(/[^a-z0-9.@]/g, ''), SCHEMA_ID.string);
  const previous = pick(LAST_NAMES);
  info.name = versions(1 + int(2), (i) => (i === 0 ? `${first} ${last}` : `${first} ${previous}`), SCHEMA_ID.string);
  info.score = versions(1 + int(4), () => Math.round(rnd() * 1_000_000) / 100, SCHEMA_ID.double);
  const tags = TAGS.filter(() => rnd() < 0.25);
  info.tags = versions(1, () => tags, ws?.tags);

  const logins: { [site: string]: JsonValue } = {};
  const siteCount = 1 + int(3);
  for (const site of SITES) {
    if (Object.keys(logins).length < siteCount && rnd() < 0.6) logins[site] = versions(1, () => 1 + int(500), SCHEMA_ID.long);
  }
  if (Object.keys(logins).length === 0) logins.web = versions(1, () => 1 + int(500), SCHEMA_ID.long);
  return { entityId: [uid], cells: { info, logins } };
}

/** The demo rows of users firstUid .. firstUid + count - 1, in uid order (not row-key order). */
export function* demoRows(count: number, options: DemoRowOptions & { readonly firstUid?: number } = {}): Generator<JsonValue> {
  const firstUid = options.firstUid ?? DEMO_FIRST_UID;
  for (let i = 0; i < count; i++) yield demoRow(firstUid + i, options);
}

export interface DemoSeedResult {
  readonly rows: number;
  readonly cells: number;
}

/**
 * Creates instance `default` (if new) and table `users` with `rows` demo rows, written in batches
 * of `batchRows`. Fails with RG_ERR_TABLE_EXISTS when the table is already there.
 */
export async function createDemoData(store: Store, options: { readonly rows?: number; readonly batchRows?: number } = {}): Promise<DemoSeedResult> {
  const count = options.rows ?? DEMO_ROW_COUNT;
  const batchRows = options.batchRows ?? 500;
  if (!(await store.listInstances()).includes(DEMO_INSTANCE)) await store.createInstance(DEMO_INSTANCE);
  const layout = parseLayout(USERS_LAYOUT_JSON);
  await store.createTable(DEMO_INSTANCE, layout);
  const schemas = await store.schemaTable(DEMO_INSTANCE);
  let batch: RowWrite[] = [];
  let cells = 0;
  for (const item of demoRows(count)) {
    const { row } = await encodeRowInput(item, { layout, schemas });
    batch.push(row);
    cells += row.cells.length;
    if (batch.length >= batchRows) {
      await store.write(DEMO_INSTANCE, DEMO_TABLE, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await store.write(DEMO_INSTANCE, DEMO_TABLE, batch);
  return { rows: count, cells };
}
