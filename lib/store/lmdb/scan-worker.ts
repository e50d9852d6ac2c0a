/**
 * A scan worker thread: renders parts of large scans (scan-pool.ts) from the same LMDB environment
 * as the main thread, with the same renderer as the single-thread scan, and posts the chunks back
 * (their memory transferred, not copied).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { open, type Database } from 'lmdb';
import { parseLayout } from '../../model/layout.js';
import type { TableLayout } from '../../model/types.js';
import { CellPicker } from '../cell-picker.js';
import { ChunkRenderer, renderChunk } from './chunk-render.js';
import { lmdbEnvOptions } from './env-options.js';
import type { PartJob, PartMessage } from './scan-protocol.js';
import { ScanCursor, type Entry } from './scan-cursor.js';

const { path } = workerData as { path: string };
const env = open(lmdbEnvOptions(path));
const tables = new Map<string, { layoutJson: string; layout: TableLayout; db: Database<Buffer, Buffer> }>();

/**
 * The value of the entry just read, left in lmdb-js's shared read buffer instead of copied into a
 * Buffer per entry: iteration ran at 1.5-1.9M entries/s this way against 1.05M with binary values
 * (/tmp micro-benchmark, 1,500,000 entries). Valid until the next read on this thread, which is
 * enough here: a part is rendered in one synchronous run, each cell before the cursor moves on.
 */
const current: { bytes: Buffer; size: number } = { bytes: Buffer.alloc(0), size: 0 };
const UNCOPIED = Symbol('value in current');
const inPlaceValues = {
  encode: (value: Buffer): Buffer => value,
  decode: (bytes: Buffer, size: number): typeof UNCOPIED => {
    current.bytes = bytes;
    current.size = size;
    return UNCOPIED;
  },
};

function tableOf(job: PartJob): { layout: TableLayout; db: Database<Buffer, Buffer> } {
  const layoutJson = JSON.stringify(job.layout);
  let t = tables.get(job.dbName);
  if (t === undefined || t.layoutJson !== layoutJson) {
    // Read-only here: the encoder only decodes (values are never written through this handle).
    t = { layoutJson, layout: parseLayout(job.layout), db: env.openDB<Buffer, Buffer>({ name: job.dbName, keyEncoding: 'binary', encoder: inPlaceValues } as never) };
    tables.set(job.dbName, t);
  }
  return t;
}

function post(message: PartMessage, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(message, transfer);
}

function copyOut(b: Buffer): ArrayBuffer {
  const ab = new ArrayBuffer(b.length);
  new Uint8Array(ab).set(b);
  return ab;
}

function renderPart(job: PartJob): void {
  const cancelled = new Int32Array(job.cancel);
  if (Atomics.load(cancelled, 0) !== 0) return post({ job: job.job, done: true });
  const { layout, db } = tableOf(job);
  const renderer = new ChunkRenderer(new CellPicker(layout, job.read, job.now), layout.keyFormat, job.render, job.chunkBytes * 2);
  const entries = db.getRange({ start: job.start && Buffer.from(job.start), end: job.end && Buffer.from(job.end) })[Symbol.iterator]();
  const cursor = new ScanCursor(entries, -1, undefined, () => undefined);
  const cellInPlace = (entry: Entry, rowEnd: number): void => renderer.cell(entry.key, rowEnd, current.bytes, current.size);
  try {
    for (;;) {
      if (Atomics.load(cancelled, 0) !== 0) break;
      const chunk = renderChunk(cursor, renderer, job.chunkBytes, cellInPlace);
      if (chunk === undefined) break;
      // A chunk that owns its whole ArrayBuffer (renderer.take() of 4 KiB and more) is moved to the
      // main thread; a smaller one lives in Node's shared buffer pool and is copied out first.
      const b = chunk.bytes;
      const owned = b.byteOffset === 0 && b.buffer.byteLength === b.length && b.buffer instanceof ArrayBuffer;
      const bytes = owned ? (b.buffer as ArrayBuffer) : copyOut(b);
      post({ job: job.job, bytes, rows: chunk.rows, cells: chunk.cells }, [bytes]);
    }
  } finally {
    cursor.finish();
  }
  post({ job: job.job, done: true });
}

parentPort!.on('message', (job: PartJob) => {
  try {
    renderPart(job);
  } catch (e) {
    post({ job: job.job, error: e instanceof Error ? e.message : String(e) });
  }
});
