/**
 * The compact row format (compact-row.ts) and its renderer (compact-render.ts), on seeded random
 * rows: encoding round-trips every version; the stored order is UTF-8 byte order; the stored bytes
 * hold no response (no CR LF, no entity id); and what the renderer writes for any read (columns,
 * versions, time range, TTL, revision, empty rows kept or dropped) is byte for byte the reference:
 * the cells a CellPicker keeps, serialized by lib/rows/row-format.ts; and NewestCells (the
 * columnar encoders' walk of the same bytes) gives those cells too where a row's newest versions
 * suffice.
 */
import t from 'tap';
import type { Revision } from '../../lib/config/config.js';
import { rowRenderSpec, rowSerializer } from '../../lib/rows/row-format.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { END_OF_TIME } from '../../lib/model/read/read-request.js';
import { FOREVER, type ReadSpec, type TableLayout } from '../../lib/model/types.js';
import { CellPicker } from '../../lib/store/cell-picker.js';
import { COUNTER_SCHEMA_ID } from '../../lib/store/cell-value.js';
import { ChunkRenderer } from '../../lib/store/lmdb/chunk-render.js';
import { decodeCompactRow, encodeCompactRow } from '../../lib/store/lmdb/compact-row.js';
import { compareUtf8, RowModel } from '../../lib/store/lmdb/row-model.js';
import { NEEDS_ROW, NewestCells } from '../../lib/store/lmdb/stored-columns.js';
import { RAW_LAYOUT } from './conformance.js';

/** mulberry32 */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = ['a', 'b', 'z', '0', ' ', '\t', ',', ':', '"', '\\', '\n', '\u0000', 'é', '€', '\u{1F600}', '\uE000', '\uFFFD', '\u007F'];

function randomText(rnd: () => number, max: number): string {
  let s = '';
  const n = Math.floor(rnd() * max);
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rnd() * ALPHABET.length)];
  return s;
}

const NOW = 1_700_000_100_000;
const STAMPS = [0, 5, NOW - 120_000, NOW - 30_000, NOW - 1, NOW, NOW + 1, 1_699_000_000_000, 9_000_000_000_000, Number.MAX_SAFE_INTEGER];

/**
 * A random row of the RAW_LAYOUT table: info (declared columns and a counter), tags and recent
 * (TTL 60 s). No undeclared column of a group family: writes validate every column against the
 * table's layout, which never changes, so no stored row holds one.
 */
function randomRow(rnd: () => number): RowModel {
  const model = new RowModel();
  const columns: [string, string][] = [];
  for (const q of ['name', 'age', 'visits']) if (rnd() < 0.6) columns.push(['info', q]);
  const tags = Math.floor(rnd() * 6);
  for (let i = 0; i < tags; i++) columns.push(['tags', randomText(rnd, 5)]);
  if (rnd() < 0.5) columns.push(['recent', randomText(rnd, 3)]);
  for (const [family, qualifier] of columns) {
    const versions = 1 + Math.floor(rnd() * 4);
    for (let v = 0; v < versions; v++) {
      const timestamp = STAMPS[Math.floor(rnd() * STAMPS.length)]!;
      if (qualifier === 'visits')
        model.put(family, qualifier, {
          timestamp,
          schemaId: COUNTER_SCHEMA_ID,
          counter: true,
          json: String(BigInt(Math.floor(rnd() * 1e6)) * (rnd() < 0.5 ? -1n : 9_223_372_036n)),
        });
      else
        model.put(family, qualifier, {
          timestamp,
          schemaId: Math.floor(rnd() * 300),
          counter: false,
          json: JSON.stringify(rnd() < 0.3 ? { s: randomText(rnd, 8), n: [1, 2.5] } : randomText(rnd, 12)),
        });
    }
  }
  return model;
}

function randomRead(rnd: () => number, layout: TableLayout): ReadSpec {
  let columns: ReadSpec['columns'];
  if (rnd() < 0.5) {
    const picks = [
      { family: 'info' },
      { family: 'tags' },
      { family: 'recent' },
      { family: 'info', qualifier: 'name' },
      { family: 'info', qualifier: 'visits' },
      { family: 'info', qualifier: 'undeclared' },
      { family: 'tags', qualifier: 'a' },
      { family: 'tags', qualifier: '' },
      { family: 'tags', qualifier: 'é,' },
    ];
    columns = picks.filter(() => rnd() < 0.3);
  }
  const maxVersions = [1, 1, 1, 2, 3, FOREVER][Math.floor(rnd() * 6)]!;
  let minTimestamp = 0;
  let maxTimestamp = END_OF_TIME;
  if (rnd() < 0.4) {
    const a = STAMPS[Math.floor(rnd() * STAMPS.length)]!;
    const b = STAMPS[Math.floor(rnd() * STAMPS.length)]!;
    [minTimestamp, maxTimestamp] = a < b ? [a, b] : [0, Math.max(a, 1)];
  }
  void layout;
  return { columns, maxVersions, minTimestamp, maxTimestamp };
}

/** The reference: the cells a CellPicker keeps, serialized as row-format.ts does. */
function reference(layout: TableLayout, model: RowModel, rowKey: Buffer, read: ReadSpec, revision: Revision, keepEmpty: boolean): string {
  const picker = new CellPicker(layout, read, NOW);
  picker.beginRow();
  const cells = [...model.cells()].filter((c) => picker.keep(c.family, c.qualifier, c.timestamp));
  if (cells.length === 0 && !keepEmpty) return '';
  return rowSerializer(layout.keyFormat, revision)({ rowKey, cells }) + '\r\n';
}

function rendered(layout: TableLayout, encoded: Buffer, rowKey: Buffer, read: ReadSpec, revision: Revision, keepEmpty: boolean): string {
  const renderer = new ChunkRenderer(layout, read, rowRenderSpec(revision), NOW, 16);
  renderer.compactRow(rowKey, encoded, keepEmpty);
  return renderer.takeChunk()?.bytes.toString('utf8') ?? '';
}

/** Seeds 1..`seeds`: each seed's generator (seeded `seed * salt`) and the random row it made first, empty rows skipped; the generator goes on from there. */
function* randomRows(seeds: number, salt: number): Generator<{ seed: number; rnd: () => number; model: RowModel }> {
  for (let seed = 1; seed <= seeds; seed++) {
    const rnd = random(seed * salt);
    const model = randomRow(rnd);
    if (!model.isEmpty) yield { seed, rnd, model };
  }
}

t.test('compareUtf8 orders as UTF-8 bytes do (surrogates after U+E000-FFFF)', async (t) => {
  const rnd = random(7);
  let checked = 0;
  for (let i = 0; i < 5000; i++) {
    const a = randomText(rnd, 6);
    const b = randomText(rnd, 6);
    t.equal(Math.sign(compareUtf8(a, b)), Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))), JSON.stringify([a, b]));
    checked++;
  }
  t.equal(checked, 5000);
});

t.test('encode then decode gives every version back, columns in stored order', async (t) => {
  const layout = parseLayout(RAW_LAYOUT);
  for (const { seed, rnd, model } of randomRows(400, 1)) {
    const key = Buffer.from(randomText(rnd, 10) + 'k', 'utf8');
    const decoded = decodeCompactRow(encodeCompactRow(model));
    t.same(decoded.columns, model.columns, `seed ${seed}`);
    const order = decoded.columns.map((c) => Buffer.concat([Buffer.from(c.family), Buffer.from([0]), Buffer.from(c.qualifier)]));
    t.ok(
      order.every((b, i) => i === 0 || Buffer.compare(order[i - 1]!, b) < 0),
      `seed ${seed}: columns sorted by bytes`,
    );
  }
});

t.test('the renderer writes exactly what CellPicker + row-format.ts give, for random rows and reads', async (t) => {
  const layout = parseLayout(RAW_LAYOUT);
  let compared = 0;
  let nonEmpty = 0;
  for (const { seed, rnd, model } of randomRows(1500, 31)) {
    const key = Buffer.from(randomText(rnd, 6) + 'r', 'utf8');
    const encoded = encodeCompactRow(model);
    for (let r = 0; r < 6; r++) {
      const read = randomRead(rnd, layout);
      const revision = (1 + Math.floor(rnd() * 3)) as Revision;
      const keepEmpty = rnd() < 0.5;
      const want = reference(layout, model, key, read, revision, keepEmpty);
      const got = rendered(layout, encoded, key, read, revision, keepEmpty);
      if (got !== want) t.equal(got, want, `seed ${seed} read ${JSON.stringify(read)} revision ${revision} keepEmpty ${keepEmpty}`);
      compared++;
      if (want !== '') nonEmpty++;
    }
  }
  t.ok(compared > 5000, `${compared} renders compared (${nonEmpty} non-empty)`);
});

t.test('a stored row holds its cells, not a response: no CR LF, no envelope, no entity id', async (t) => {
  let checked = 0;
  for (const { seed, rnd, model } of randomRows(300, 7)) {
    // Values without a CR or LF of their own (JSON escapes them; the point is the framing).
    const encoded = encodeCompactRow(model);
    const text = encoded.toString('latin1');
    t.notOk(text.includes('"entityId"'), `seed ${seed}: no entityId field`);
    t.notOk(text.includes('"cells"'), `seed ${seed}: no cells map`);
    t.notOk(text.includes('"timestamp"'), `seed ${seed}: no cell fragments`);
    t.notOk(text.endsWith('\r\n'), `seed ${seed}: no row terminator`);
    checked++;
  }
  t.ok(checked > 100);
});

type Slots = Map<string, { family: string; qualifier: string; slot: number }>;

/** A NewestCells consumer's numbering: a slot per column met, in order; `rowsFor`'s columns NEEDS_ROW. */
function slotNumbering(rowsFor: string | undefined): { slots: Slots; slotOf: (family: string, qualifier: string) => number } {
  const slots: Slots = new Map();
  const slotOf = (family: string, qualifier: string): number => {
    if (family === rowsFor) return NEEDS_ROW;
    const key = JSON.stringify([family, qualifier]);
    if (!slots.has(key)) slots.set(key, { family, qualifier, slot: slots.size });
    return slots.get(key)!.slot;
  };
  return { slots, slotOf };
}

/** `want` and `got` of a NewestCells reading of `encoded`: the CellPicker's cells and the slots', as sorted lines. */
function newestCompared(
  layout: TableLayout,
  read: ReadSpec,
  model: RowModel,
  encoded: Buffer,
  cells: NewestCells,
  slots: Slots,
): { n: number; want: string[]; got: string[] } {
  const picker = new CellPicker(layout, read, NOW);
  picker.beginRow();
  const kept = [...model.cells()].filter((c) => picker.keep(c.family, c.qualifier, c.timestamp));
  const n = cells.of(encoded);
  const want = kept.map((c) => `${c.family}/${c.qualifier}@${c.timestamp}#${c.schemaId}=${c.json}`).sort();
  const got: string[] = [];
  for (const { family, qualifier, slot } of slots.values()) {
    if (cells.starts[slot]! < 0) continue;
    const json = encoded.toString('utf8', cells.starts[slot], cells.ends[slot]);
    got.push(`${family}/${qualifier}@${cells.stamps[slot]}#${cells.schemaIds[slot]}=${json}`);
  }
  return { n, want, got: got.sort() };
}

t.test('NewestCells gives, by slot, exactly the cells CellPicker keeps of the rows whose newest versions suffice', async (t) => {
  const layout = parseLayout(RAW_LAYOUT);
  let compared = 0;
  let needsRow = 0;
  for (const { seed, rnd, model } of randomRows(1500, 17)) {
    const encoded = encodeCompactRow(model);
    for (let r = 0; r < 6; r++) {
      const read = randomRead(rnd, layout);
      // The `recent` family's columns sent to the rows in half the reads.
      const rowsFor = rnd() < 0.5 ? 'recent' : undefined;
      const { slots, slotOf } = slotNumbering(rowsFor);
      const cells = new NewestCells(layout, read, 64, slotOf, NOW);
      if (!cells.suits(encoded)) continue;
      const { n, want, got } = newestCompared(layout, read, model, encoded, cells, slots);
      const what = `seed ${seed} read ${JSON.stringify(read)}`;
      if (want.some((line) => line.startsWith(`${rowsFor}/`))) {
        if (n !== -1) t.equal(n, -1, `${what}: a kept cell of a NEEDS_ROW column sends the row to the rows`);
        needsRow++;
        continue;
      }
      if (n !== want.length || got.join('\n') !== want.join('\n')) t.same({ n, got }, { n: want.length, got: want }, what);
      compared++;
    }
  }
  t.ok(compared > 2000, `${compared} rows compared`);
  t.ok(needsRow > 100, `${needsRow} rows sent to the rows by a NEEDS_ROW column`);
});

t.test(
  'NewestCells reads rows of a repeated shape as it reads each row alone: the same slots, timestamps out of range and NEEDS_ROW columns included',
  async (t) => {
    const layout = parseLayout(RAW_LAYOUT);
    let compared = 0;
    let byShape = 0;
    for (let seed = 1; seed <= 120; seed++) {
      const rnd = random(seed * 101);
      const read = randomRead(rnd, layout);
      const rowsFor = rnd() < 0.3 ? 'recent' : undefined;
      const { slots, slotOf } = slotNumbering(rowsFor);
      // One reader for the whole sequence, as a scan has: rows of two or three column sets, each
      // repeated with new timestamps (some outside the read's range or a family's TTL), values
      // and now and then another schema id, so a row mostly meets a shape learnt from an earlier one.
      const cells = new NewestCells(layout, read, 64, slotOf, NOW);
      // A column keeps its writer schema in most rows, as a table's columns do.
      const shapes = Array.from({ length: 2 + Math.floor(rnd() * 2) }, () =>
        [...randomRow(rnd).cells()].map((c) => [c.family, c.qualifier, Math.floor(rnd() * 300)] as const),
      );
      let columns = shapes[0]!;
      for (let r = 0; r < 60; r++) {
        // Runs of rows of one shape, as neighbouring rows of a table mostly are.
        if (rnd() < 0.25) columns = shapes[Math.floor(rnd() * shapes.length)]!;
        const model = new RowModel();
        const stamp = STAMPS[Math.floor(rnd() * STAMPS.length)]!;
        for (const [family, qualifier, schemaId] of columns) {
          const counter = qualifier === 'visits';
          model.put(family, qualifier, {
            timestamp: rnd() < 0.8 ? stamp : STAMPS[Math.floor(rnd() * STAMPS.length)]!,
            schemaId: counter ? COUNTER_SCHEMA_ID : rnd() < 0.95 ? schemaId : Math.floor(rnd() * 300),
            counter,
            json: counter ? String(Math.floor(rnd() * 1e6)) : JSON.stringify(randomText(rnd, 6)),
          });
        }
        if (model.isEmpty) continue;
        const encoded = encodeCompactRow(model);
        if (!cells.suits(encoded)) continue;
        const { n, want, got } = newestCompared(layout, read, model, encoded, cells, slots);
        const what = `seed ${seed} row ${r} read ${JSON.stringify(read)}`;
        if (want.some((line) => line.startsWith(`${rowsFor}/`))) {
          if (n !== -1) t.equal(n, -1, `${what}: a kept cell of a NEEDS_ROW column sends the row to the rows`);
          continue;
        }
        if (n !== want.length || got.join('\n') !== want.join('\n')) t.same({ n, got }, { n: want.length, got: want }, what);
        compared++;
      }
      byShape += cells.rowsByShape;
    }
    t.ok(compared > 3000, `${compared} rows compared`);
    t.ok(byShape > compared / 8, `${byShape} of them read through a shape`);
  },
);
