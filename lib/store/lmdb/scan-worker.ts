/**
 * A scan worker thread: renders parts of large scans (scan-pool.ts) from the same LMDB environment
 * as the main thread, with the same renderer as the single-thread scan, and posts the chunks back
 * (their memory transferred, not copied).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { open, type Database } from 'lmdb';
import { parseLayout } from '../../model/layout.js';
import type { TableLayout } from '../../model/types.js';
import { rowKeyEnd } from './cell-key.js';
import { ChunkRenderer } from './chunk-render.js';
import { lmdbEnvOptions } from './env-options.js';
import type { PartJob, PartMessage } from './scan-protocol.js';
import { isRowEntry, rowKeyOf, sameRow } from './scan-cursor.js';
import { TAG_COMPACT } from './compact-row.js';

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

/**
 * Keys likewise: lmdb-js copies every key out of its key buffer (binary keys); here a key is a view
 * of that buffer, valid until the next read. Iteration with both in place: 3.5-4.6M entries/s
 * against 2.1-3.1M with copied keys (same micro-benchmark, 1,653,960 entries).
 */
function keyView(target: Buffer, start: number, end: number): Buffer {
  return target.subarray(start, end);
}
const inPlaceValues = {
  encode: (value: Buffer): Buffer => value,
  decode: (bytes: Buffer, size: number): typeof UNCOPIED => {
    current.bytes = bytes;
    current.size = size;
    return UNCOPIED;
  },
};

function tableOf(job: PartJob): { layout: TableLayout; db: Database<Buffer, Buffer> } {
  const { layoutJson } = job;
  let t = tables.get(job.dbName);
  if (t === undefined || t.layoutJson !== layoutJson) {
    // Read-only here: the encoder only decodes (values are never written through this handle).
    const db = env.openDB<Buffer, Buffer>({ name: job.dbName, keyEncoding: 'binary', encoder: inPlaceValues } as never);
    (db as unknown as { readKey: typeof keyView }).readKey = keyView;
    t = { layoutJson, layout: parseLayout(JSON.parse(layoutJson) as Record<string, unknown>), db };
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
  const renderer = new ChunkRenderer(layout, job.read, job.render, job.now, job.chunkBytes * 2);
  const send = (): void => {
    const chunk = renderer.takeChunk();
    if (chunk === undefined) return;
    // A chunk that owns its whole ArrayBuffer (4 KiB and more) is moved to the main thread; a
    // smaller one lives in Node's shared buffer pool and is copied out first.
    const b = chunk.bytes;
    const owned = b.byteOffset === 0 && b.buffer.byteLength === b.length && b.buffer instanceof ArrayBuffer;
    const bytes = owned ? (b.buffer as ArrayBuffer) : copyOut(b);
    post({ job: job.job, bytes, rows: chunk.rows, cells: chunk.cells }, [bytes]);
  };
  // The row being rendered: its key prefix (escaped row key and terminator), copied once per row,
  // since every key is a view that the next read overwrites.
  let prefix: Buffer | undefined;
  let rowEnd = 0;
  /** The current row is stored as cell entries (spilled or legacy): its cells are rendered one by one. */
  let cellRow = false;
  for (const { key } of db.getRange({ start: job.start && Buffer.from(job.start), end: job.end && Buffer.from(job.end) }) as Iterable<{ key: Buffer }>) {
    if (prefix === undefined || !sameRow(prefix, key, rowEnd)) {
      if (cellRow) renderer.endRow();
      if (renderer.length >= job.chunkBytes) {
        send();
        if (Atomics.load(cancelled, 0) !== 0) break;
      }
      rowEnd = rowKeyEnd(key);
      cellRow = !(isRowEntry(key, rowEnd) && current.bytes[0] === TAG_COMPACT);
      if (!cellRow) {
        // A compact row is its one entry: rendered from the key and value views as they are (no
        // copy of the key, no unescaping unless the entity id needs the row key).
        renderer.compactRow(key, current.bytes, false, true);
        prefix = undefined;
        continue;
      }
      prefix = Buffer.from(key.subarray(0, rowEnd));
      renderer.beginRow(rowKeyOf(prefix, rowEnd));
      // A spilled row's marker holds no cell: its cells follow.
      if (isRowEntry(key, rowEnd)) continue;
    }
    if (cellRow) renderer.cell(key, rowEnd, current.bytes, current.size);
  }
  if (Atomics.load(cancelled, 0) === 0) {
    if (cellRow) renderer.endRow();
    send();
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
