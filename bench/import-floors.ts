/**
 * Scenario 3's floors: what an import must at least cost on this machine, each part measured
 * alone, so the import figure can be read against what bounds it rather than only against
 * PostgreSQL (whose `\copy FROM` reads tab-separated text into heap pages, work of another kind).
 *
 * (a) The write floor: the imported table's own entries (one compact row a row), written again into
 *     a fresh data directory by LmdbStore.writePacked exactly as `rowgate import` writes them:
 *     batches of the import's size in input order (a seeded shuffle stands for the file's order:
 *     the salted keys scatter it over the table), each of parts of PART_ROWS rows sorted on their
 *     own and merged as they are written, two commits in flight, each synced. Nothing is parsed or
 *     encoded: the rows are already bytes.
 * (b) The parse floor: every line of the input decoded (UTF-8, fatal) and given to JSON.parse on one
 *     thread, nothing else: the least a JSON input costs before any row is validated or encoded.
 * (c) The ordered-write floor: the same entries as (a), into a fresh table, but in key order across
 *     the whole table and appended (lmdb-js `append`, LMDB's MDB_APPEND: each leaf page filled and
 *     written once), in transactions of the import's batch size, two in flight, each synced, by
 *     lmdb-js alone: what (a) costs without the store's merge of the parts and its checks. A
 *     file of one batch (the bench's) is written this way by the import too.
 *
 * Each runs in a process of its own (`node import-floors.js write DATA INTO` or `parse FILE`, one
 * JSON figure on stdout), as every baseline does: run inside the bench process, the write floor
 * paid for collecting the bench's own heap (6.6 us of CPU a row against 3.5-4.5 alone).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import { parseLayout } from '../lib/model/layout/layout.js';
import { lmdbEnvOptions } from '../lib/store/lmdb/env-options.js';
import { LmdbStore } from '../lib/store/lmdb/lmdb-store.js';
import { BatchPacker, type PreparedBatch } from '../lib/store/lmdb/prepared-batch.js';
import { ByteWriter } from '../lib/bytes/byte-writer.js';
import { DEFAULT_IMPORT_BATCH, PART_ROWS } from '../tools/commands/import.js';
import { BENCH_INSTANCE, BENCH_LAYOUT, BENCH_TABLE } from './dataset.js';

export interface FloorFigure {
  readonly rows: number;
  readonly seconds: number;
  /** CPU seconds of this process (all its threads) over the measurement. */
  readonly cpuSeconds: number;
}

/** (a): the table's entries of `data` written again into a fresh store at `into`, as an import writes them. */
export async function writeFloor(data: string, into: string): Promise<FloorFigure> {
  // Built before the clock starts, and held as a few large buffers: the rows as a million small
  // Buffer objects made the timed writes pay for marking them (major GC was a fifth of a profile).
  const entries = tableEntries(data);
  const batches = preparedBatches(entries);
  const store = await storeWithTable(into);
  try {
    return await timedWrites(
      entries.ends.length / 2,
      batches.map((parts) => () => store.writePacked(BENCH_INSTANCE, BENCH_TABLE, parts)),
    );
  } finally {
    await store.close();
  }
}

/** (c): the table's entries of `data` appended in key order to a fresh table at `into`. */
export async function appendFloor(data: string, into: string): Promise<FloorFigure> {
  const entries = tableEntries(data);
  // The table made by the store, so its database is the one rows are written to; then written with lmdb-js itself.
  await (await storeWithTable(into)).close();
  const env = open(lmdbEnvOptions(into));
  try {
    const db = env.openDB<Buffer, Buffer>({ name: `data/${BENCH_INSTANCE}/${BENCH_TABLE}`, keyEncoding: 'binary', encoding: 'binary' });
    const count = entries.ends.length / 2;
    const writes: (() => Promise<unknown>)[] = [];
    for (let first = 0; first < count; first += DEFAULT_IMPORT_BATCH) {
      const last = Math.min(count, first + DEFAULT_IMPORT_BATCH);
      writes.push(() =>
        db.transaction(() => {
          for (let i = first; i < last; i++) {
            const { key, value } = entryAt(entries, i);
            db.putSync(key, value, { append: true });
          }
        }),
      );
    }
    return await timedWrites(count, writes);
  } finally {
    await env.close();
  }
}

/** A fresh data directory at `into` holding the bench table, empty; the store left open. */
async function storeWithTable(into: string): Promise<LmdbStore> {
  const store = new LmdbStore({ path: into, scanThreads: 1 });
  await store.createInstance(BENCH_INSTANCE);
  await store.createTable(BENCH_INSTANCE, parseLayout(BENCH_LAYOUT));
  return store;
}

/** Runs the writes in order, two in flight as import.ts's WRITES_AHEAD, timed with this process's CPU. */
async function timedWrites(rows: number, writes: readonly (() => Promise<unknown>)[]): Promise<FloorFigure> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const inFlight: Promise<unknown>[] = [];
  for (const write of writes) {
    inFlight.push(write());
    if (inFlight.length >= 2) await inFlight.shift();
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { rows, seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** (b): every non-blank line of `ndjson` decoded and parsed on this thread. */
export function parseFloor(ndjson: string): FloorFigure {
  const bytes = readFileSync(ndjson);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let rows = 0;
  let start = 0;
  let check = 0;
  for (let i = bytes.indexOf(10, start); i >= 0; i = bytes.indexOf(10, start)) {
    if (i > start) {
      const row = JSON.parse(decoder.decode(bytes.subarray(start, i))) as { cells: object };
      if (row.cells !== undefined) check++;
      rows++;
    }
    start = i + 1;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  if (check !== rows) throw new Error('a line without cells');
  return { rows, seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** A table's entries, one after another in one buffer: entry i's key is `bytes[ends[2i - 1], ends[2i])`, its value `bytes[ends[2i], ends[2i + 1])` (ends[-1] = 0). */
interface Entries {
  readonly bytes: Buffer;
  readonly ends: Int32Array;
}

/** Entry i's key and value: views of the entries' buffer. */
function entryAt({ bytes, ends }: Entries, i: number): { key: Buffer; value: Buffer } {
  const keyStart = i === 0 ? 0 : ends[2 * i - 1]!;
  return { key: bytes.subarray(keyStart, ends[2 * i]!), value: bytes.subarray(ends[2 * i]!, ends[2 * i + 1]!) };
}

function tableEntries(data: string): Entries {
  const env = open({ ...lmdbEnvOptions(data), readOnly: true });
  try {
    const db = env.openDB<Buffer, Buffer>({ name: `data/${BENCH_INSTANCE}/${BENCH_TABLE}`, keyEncoding: 'binary', encoding: 'binary' });
    const out = new ByteWriter(64 * 1024 * 1024);
    const ends: number[] = [];
    for (const { key, value } of db.getRange({})) {
      out.bytes(key);
      ends.push(out.pos);
      out.bytes(value);
      ends.push(out.pos);
    }
    return { bytes: out.buf, ends: Int32Array.from(ends) };
  } finally {
    void env.close();
  }
}

/** The entries in the import's batches of parts, each part packed and sorted by the import's own BatchPacker: a seeded shuffle stands for the file's order. */
function preparedBatches(entries: Entries): PreparedBatch[][] {
  const count = entries.ends.length / 2;
  const order = Array.from({ length: count }, (_, i) => i);
  shuffle(order, 0x5eed);
  const packer = new BatchPacker(parseLayout(BENCH_LAYOUT), Infinity);
  const batches: PreparedBatch[][] = [];
  for (let b = 0; b < count; b += DEFAULT_IMPORT_BATCH) {
    const batchEnd = Math.min(count, b + DEFAULT_IMPORT_BATCH);
    const parts: PreparedBatch[] = [];
    for (let p = b; p < batchEnd; p += PART_ROWS) {
      for (const i of order.slice(p, Math.min(p + PART_ROWS, batchEnd))) {
        const { key, value } = entryAt(entries, i);
        packer.addEncoded(key, value);
      }
      parts.push(packer.finish());
    }
    batches.push(parts);
  }
  return batches;
}

/** Fisher-Yates with a small deterministic generator (mulberry32): the same order every run. */
function shuffle<T>(items: T[], seed: number): void {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [what, a, b] = process.argv.slice(2);
  const figure =
    what === 'write' && a !== undefined && b !== undefined
      ? await writeFloor(a, b)
      : what === 'append' && a !== undefined && b !== undefined
        ? await appendFloor(a, b)
        : what === 'parse' && a !== undefined
          ? parseFloor(a)
          : undefined;
  if (figure === undefined) {
    process.stderr.write('usage: import-floors.js write DATA INTO | append DATA INTO | parse FILE\n');
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(figure)}\n`);
}
