/**
 * The LMDB store's fused scan loop (chunk-render.ts, compact-render.ts, and the same renderer on
 * the scan threads) and the reference pipeline's stages (lib/rows/stages: store scan, filter,
 * serialize, framing) give the same bytes: generated requests (cols, versions, timerange, limit,
 * revisions 1-3, CR LF and LF framing) over tables of many layouts and key formats, rows compact,
 * with older versions, and spilled; point gets likewise.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import type { Revision } from '../../lib/config/config.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { USERS_LAYOUT_JSON } from '../../lib/model/layout/demo-layouts.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { END_OF_TIME } from '../../lib/model/read/read-request.js';
import { FOREVER, type ComponentValue, type EncodedCell, type ReadSpec, type RowWrite, type TableLayout, type Timestamp } from '../../lib/model/types.js';
import type { RowTerminator } from '../../lib/rows/row-document.js';
import { rowRenderSpec } from '../../lib/rows/row-format.js';
import { frame } from '../../lib/rows/stages/framing.js';
import { referenceSource } from '../../lib/rows/stages/pipeline.js';
import { RowSerializer } from '../../lib/rows/stages/serialize.js';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { RenderedChunk, ScanRequest } from '../../lib/store/store.js';
import { PLAYERS_LAYOUT, SAMPLE_LAYOUT } from '../http/harness.js';
import { RAW_LAYOUT } from './conformance.js';
import { HASH_LAYOUT, HASH_PREFIX_LAYOUT, openStoreWithTable } from './lmdb-fixtures.js';
import { prng as random } from '../model/key-fixtures.js';
import { repoPath } from '../support/repo-root.js';

const fixture = (name: string): string => readFileSync(repoPath('test', 'fixtures', 'layouts', name), 'utf8');

const LAYOUTS = [
  SAMPLE_LAYOUT,
  PLAYERS_LAYOUT,
  RAW_LAYOUT,
  USERS_LAYOUT_JSON,
  fixture('example-a.json'),
  fixture('example-c.json'),
  HASH_LAYOUT,
  HASH_PREFIX_LAYOUT,
];

const NOW = Date.now();
const STAMPS: Timestamp[] = [0, 7, 1_000, NOW - 120_000, NOW - 30_000, NOW - 1, NOW, NOW + 5, 1_700_000_000_123, 2 ** 53 - 1, 2n ** 53n + 3n, 2n ** 62n];
const NAMES = ['a', 'b', 'zz', '', 'q\u0000x', 'quote"d', 'back\\slash', 'é', '\u{1F600}', 'line\r\nbreak', 'k0', 'k1'];

function pick<T>(rnd: () => number, items: readonly T[]): T {
  return items[Math.floor(rnd() * items.length)]!;
}

function componentsOf(rnd: () => number, layout: TableLayout, i: number): ComponentValue[] {
  const format = layout.keyFormat;
  if (format.encoding !== 'FORMATTED') return [`key ${i} ${pick(rnd, NAMES)}`];
  // Components the fused loop writes from the key's bytes and ones it leaves to the entity id's
  // text (a STRING needing an escape or UTF-8, a LONG past 2^53), negative numbers among both.
  return format.components.map((c) =>
    c.type === 'STRING'
      ? `s${i}${pick(rnd, ['', 'x', 'é', 'q"', 'b\\', 'c\u0001'])}`
      : c.type === 'INTEGER'
        ? ((i * 7919) % 100_000) - (i % 2) * 50_000
        : pick(rnd, [i * 1_000_003, -i * 1_000_003, BigInt(i) * 9_007_199_254_740_993n, -BigInt(i) * 4_294_967_311n]),
  );
}

function valueJson(rnd: () => number): string {
  return pick(rnd, [
    JSON.stringify(`v${Math.floor(rnd() * 1000)}`),
    '12',
    '-3.5',
    'true',
    'null',
    '{"s":"x\\r\\n","n":[1,2]}',
    JSON.stringify(pick(rnd, NAMES)),
  ]);
}

/** A row's columns (family, qualifier, writer schema), repeated by many rows of a table. */
type Shape = { family: string; qualifier: string; schemaId: number; counter: boolean }[];

function shapeOf(rnd: () => number, layout: TableLayout): Shape {
  const shape: Shape = [];
  for (const family of layout.families.values()) {
    // Map qualifiers of one length ('k0', 'k1'): two shapes differ in a name's bytes, not its length.
    const qualifiers = family.mapSchema ? [pick(rnd, ['k0', 'k1']), 'zz'] : family.columns.filter(() => rnd() < 0.8).map((c) => c.name);
    for (const qualifier of qualifiers) {
      const counter = (family.mapSchema ?? family.columns.find((c) => c.name === qualifier)?.schema)?.type === 'COUNTER';
      shape.push({ family: family.name, qualifier, schemaId: Math.floor(rnd() * 3), counter });
    }
  }
  return shape;
}

/** The shape with names of the same lengths changed where the layout allows (k0 and k1; declared columns of one length): only the names' bytes tell the two apart. */
function renamed(layout: TableLayout, shape: Shape): Shape {
  return shape.map((c) => {
    const family = layout.families.get(c.family)!;
    if (family.mapSchema) return { ...c, qualifier: c.qualifier === 'k0' ? 'k1' : c.qualifier === 'k1' ? 'k0' : c.qualifier };
    const other = family.columns.find(
      (d) => d.name !== c.qualifier && d.name.length === c.qualifier.length && !shape.some((e) => e.family === c.family && e.qualifier === d.name),
    );
    return other === undefined ? c : { ...c, qualifier: other.name };
  });
}

/**
 * Rows of three shapes (two told apart only by names), one version a column, at a timestamp shared by the row or one a cell: the
 * fused loop writes a run of rows of one shape in one go (compact-render.ts's RowShape), and the
 * time range, TTL and names decide where a row leaves the run.
 */
function shapedRowsOf(rnd: () => number, layout: TableLayout, from: number, count: number): RowWrite[] {
  const first = shapeOf(rnd, layout);
  const shapes = [first, renamed(layout, first), shapeOf(rnd, layout)];
  const rows: RowWrite[] = [];
  for (let i = from; i < from + count; i++) {
    const shape = pick(rnd, shapes);
    const shared = pick(rnd, STAMPS);
    const cells: EncodedCell[] = shape.map(({ family, qualifier, schemaId, counter }) => {
      const timestamp = rnd() < 0.7 ? shared : pick(rnd, STAMPS);
      return counter
        ? { kind: 'counter-set', family, qualifier, timestamp, value: BigInt(Math.floor(rnd() * 1e6)) }
        : { kind: 'value', family, qualifier, timestamp, schemaId, json: valueJson(rnd) };
    });
    if (cells.length > 0) rows.push({ rowKey: encodeRowKey(layout.keyFormat, componentsOf(rnd, layout, i)), cells });
  }
  return rows;
}

/** Random rows of `layout`; `wide` adds one row too large for a compact row (stored spilled). */
function rowsOf(rnd: () => number, layout: TableLayout, count: number): RowWrite[] {
  const rows: RowWrite[] = [];
  for (let i = 0; i < count; i++) {
    const cells: EncodedCell[] = [];
    for (const family of layout.families.values()) {
      if (rnd() < 0.25) continue;
      const qualifiers = family.mapSchema ? NAMES.filter(() => rnd() < 0.3) : family.columns.filter(() => rnd() < 0.7).map((c) => c.name);
      const wide = family.mapSchema !== undefined && i === 3;
      if (wide) for (let k = 0; k < 600; k++) qualifiers.push(`wide-${k}-${'x'.repeat(30)}`);
      for (const qualifier of qualifiers) {
        const counter = (family.mapSchema ?? family.columns.find((c) => c.name === qualifier)?.schema)?.type === 'COUNTER';
        const versions = wide ? 1 : 1 + Math.floor(rnd() * 3);
        for (let v = 0; v < versions; v++) {
          const timestamp = pick(rnd, STAMPS);
          if (counter) cells.push({ kind: 'counter-set', family: family.name, qualifier, timestamp, value: BigInt(Math.floor(rnd() * 1e9)) * 1_000_003n });
          else cells.push({ kind: 'value', family: family.name, qualifier, timestamp, schemaId: Math.floor(rnd() * 20), json: valueJson(rnd) });
        }
      }
    }
    if (cells.length > 0) rows.push({ rowKey: encodeRowKey(layout.keyFormat, componentsOf(rnd, layout, i)), cells });
  }
  return rows;
}

function randomRead(rnd: () => number, layout: TableLayout): ReadSpec {
  let columns: ReadSpec['columns'];
  if (rnd() < 0.5) {
    const picks: { family: string; qualifier?: string }[] = [];
    for (const family of layout.families.values()) {
      picks.push({ family: family.name });
      for (const c of family.columns) picks.push({ family: family.name, qualifier: c.name });
      picks.push({ family: family.name, qualifier: pick(rnd, NAMES) });
    }
    columns = picks.filter(() => rnd() < 0.3);
    if (columns.length === 0) columns = [picks[0]!];
  }
  const maxVersions = pick(rnd, [1, 1, 2, 3, FOREVER]);
  let minTimestamp: Timestamp = 0;
  let maxTimestamp: Timestamp = END_OF_TIME;
  if (rnd() < 0.4) {
    const a = pick(rnd, STAMPS);
    const b = pick(rnd, STAMPS);
    if (a < b) [minTimestamp, maxTimestamp] = [a, b];
    else maxTimestamp = a === 0 ? 1 : a;
  }
  return { columns, maxVersions, minTimestamp, maxTimestamp };
}

async function drain(source: {
  next(): Promise<RenderedChunk | undefined>;
  close(): Promise<void>;
}): Promise<{ text: string; rows: number; lastRows: string[] }> {
  const chunks: Buffer[] = [];
  const lastRows: string[] = [];
  let rows = 0;
  try {
    for (let c = await source.next(); c !== undefined; c = await source.next()) {
      chunks.push(c.bytes);
      rows += c.rows;
      // Where the chunk says its last row starts, and that row's key.
      if (c.lastRow !== undefined)
        lastRows.push(`${c.lastRow.rowKey.toString('hex')}@${c.bytes.subarray(c.lastRow.start, c.lastRow.start + 40).toString('hex')}`);
    }
  } finally {
    await source.close();
  }
  return { text: Buffer.concat(chunks).toString('utf8'), rows, lastRows };
}

async function fused(store: LmdbStore, table: string, request: ScanRequest, revision: Revision, terminator: RowTerminator) {
  const scan = store.scanChunks('i', table, request, rowRenderSpec(revision, terminator));
  return drain({ next: async () => (await scan.next()).value ?? undefined, close: async () => void (await scan.return()) });
}

t.test('fused scans and point gets give the reference stages’ bytes, over many layouts and requests', async (t) => {
  let compared = 0;
  let nonEmpty = 0;
  // One store holds every layout's table: its two scan threads start once (a thread's start was
  // most of this file's time, 20 s of 8 stores' threads in CI, 0.3 s of CPU each).
  const layouts = LAYOUTS.map((text) => parseLayout(text));
  t.equal(new Set(layouts.map((l) => l.name)).size, layouts.length, 'one table a layout');
  // Scan threads with tiny parts, so whole-range scans run on them too.
  const { store } = await openStoreWithTable(t, layouts[0]!, { scanThreads: 2, parallelScan: { minBytes: 0, partBytes: 4096 } });
  for (const layout of layouts.slice(1)) await store.createTable('i', layout);
  const lmdb = store;
  for (const [index, layout] of layouts.entries()) {
    const rnd = random(1000 + index);
    const rows = [...rowsOf(rnd, layout, 60), ...shapedRowsOf(rnd, layout, 60, 90)];
    await store.write('i', layout.name, rows);
    for (let r = 0; r < 25; r++) {
      const read = randomRead(rnd, layout);
      const revision = (1 + Math.floor(rnd() * 3)) as Revision;
      const terminator: RowTerminator = rnd() < 0.5 ? '\r\n' : '\n';
      const request: ScanRequest = { limit: pick(rnd, [-1, -1, 1, 3, 10]), read };
      const label = `${layout.name}: read ${JSON.stringify(read, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))} limit ${request.limit} revision ${revision} ${JSON.stringify(terminator)}`;
      const got = await fused(lmdb, layout.name, request, revision, terminator);
      const want = await drain(referenceSource(store, 'i', layout.name, request, layout, rowRenderSpec(revision, terminator)));
      if (got.text !== want.text) t.equal(got.text, want.text, `scan bytes: ${label}`);
      if (got.rows !== want.rows) t.equal(got.rows, want.rows, `scan rows: ${label}`);
      // Every chunk's last row starts where it says, with the row it names (limited scans run on this thread).
      if (request.limit >= 0)
        t.ok(
          got.lastRows.every((x) => x.includes('@7b22656e74697479496422')),
          `fused chunks name their last row: ${label}`,
        );
      compared++;
      if (want.rows > 0) nonEmpty++;

      const keys = [...rows.filter(() => rnd() < 0.2).map((row) => row.rowKey), encodeRowKey(layout.keyFormat, componentsOf(rnd, layout, 999))];
      const point = store.getChunk('i', layout.name, keys, read, rowRenderSpec(revision, terminator));
      const serializer = new RowSerializer(layout.keyFormat, rowRenderSpec(revision));
      const reference = frame(serializer.batch(await store.get('i', layout.name, keys, read)), terminator);
      if (!point.bytes.equals(reference.bytes)) t.equal(point.bytes.toString(), reference.bytes.toString(), `point gets: ${label}`);
    }
  }
  t.ok(compared >= 200, `${compared} scans compared (${nonEmpty} with rows), and their point gets`);
});
