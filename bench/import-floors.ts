/**
 * Scenario 3's floors: what an import must at least cost on this machine, each part measured
 * alone, so the import figure can be read against what bounds it rather than only against
 * PostgreSQL (whose `\copy FROM` reads tab-separated text into heap pages, work of another kind).
 *
 * (a) The write floor: the imported table's own entries (one compact row a row), written again into
 *     a fresh data directory by LmdbStore.writePrepared exactly as `rowgate import` writes them:
 *     batches of the import's size in input order (the salted keys scatter each batch over the
 *     table; here a seeded shuffle stands for the file's order), each sorted by key, two commits in
 *     flight, each synced. Nothing is parsed or encoded: the rows are already bytes.
 * (b) The parse floor: every line of the input decoded (UTF-8, fatal) and given to JSON.parse on one
 *     thread, nothing else: the least a JSON input costs before any row is validated or encoded.
 */
import { readFileSync } from 'node:fs';
import { open } from 'lmdb';
import { parseLayout } from '../lib/model/layout.js';
import { LmdbStore } from '../lib/store/lmdb/lmdb-store.js';
import type { PreparedBatch } from '../lib/store/lmdb/prepared-batch.js';
import { DEFAULT_IMPORT_BATCH } from '../tools/commands/import.js';
import { BENCH_INSTANCE, BENCH_LAYOUT, BENCH_TABLE } from './dataset.js';

export interface FloorFigure {
  readonly rows: number;
  readonly seconds: number;
  /** CPU seconds of this process (all its threads) over the measurement. */
  readonly cpuSeconds: number;
}

/** (a): the table's entries of `data` written again into a fresh store at `into`, as an import writes them. */
export async function writeFloor(data: string, into: string): Promise<FloorFigure> {
  const entries = tableEntries(data);
  shuffle(entries, 0x5eed);
  const batches: PreparedBatch[] = [];
  for (let i = 0; i < entries.length; i += DEFAULT_IMPORT_BATCH) batches.push(pack(entries.slice(i, i + DEFAULT_IMPORT_BATCH)));
  const store = new LmdbStore({ path: into, scanThreads: 1 });
  try {
    await store.createInstance(BENCH_INSTANCE);
    await store.createTable(BENCH_INSTANCE, parseLayout(BENCH_LAYOUT));
    const cpu = process.cpuUsage();
    const started = performance.now();
    // Two writes in flight, as import.ts's WRITES_AHEAD.
    const inFlight: Promise<void>[] = [];
    for (const batch of batches) {
      inFlight.push(store.writePrepared(BENCH_INSTANCE, BENCH_TABLE, batch));
      if (inFlight.length >= 2) await inFlight.shift();
    }
    await Promise.all(inFlight);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    return { rows: entries.length, seconds, cpuSeconds: (used.user + used.system) / 1e6 };
  } finally {
    await store.close();
  }
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

interface Entry {
  readonly key: Buffer;
  readonly value: Buffer;
}

function tableEntries(data: string): Entry[] {
  const env = open({ path: data, noSubdir: false, maxDbs: 10_000, compression: false, readOnly: true });
  try {
    const db = env.openDB<Buffer, Buffer>({ name: `data/${BENCH_INSTANCE}/${BENCH_TABLE}`, keyEncoding: 'binary', encoding: 'binary' });
    const out: Entry[] = [];
    // Copies: the values lmdb-js hands out are views of its read buffer.
    for (const { key, value } of db.getRange({})) out.push({ key: Buffer.from(key), value: Buffer.from(value) });
    return out;
  } finally {
    void env.close();
  }
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

/** A batch in prepared-batch.ts's layout (u16 prefix length, prefix, u32 row length, compact row), sorted by key. */
function pack(entries: Entry[]): PreparedBatch {
  entries.sort((a, b) => Buffer.compare(a.key, b.key));
  let size = 0;
  for (const e of entries) size += 6 + e.key.length + e.value.length;
  const own = new Uint8Array(size);
  const out = Buffer.from(own.buffer, 0, size);
  let pos = 0;
  for (const e of entries) {
    pos = out.writeUInt16LE(e.key.length, pos);
    pos += e.key.copy(out, pos);
    pos = out.writeUInt32LE(e.value.length, pos);
    pos += e.value.copy(out, pos);
  }
  return { bytes: own, rows: entries.length };
}
