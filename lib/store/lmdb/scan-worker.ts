/**
 * A scan worker thread: renders parts of large scans (scan-pool.ts) from the same LMDB environment
 * as the main thread, with the same renderer as the single-thread scan, and posts the chunks back
 * (their memory transferred, not copied).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { open, type Database, type RootDatabase } from 'lmdb';
import { replaceLmdbReadKey } from '../../deps/internals.js';
import { parseLayout } from '../../model/layout/layout.js';
import type { TableLayout } from '../../model/types.js';
import type { RenderedChunk } from '../store.js';
import { ChunkRenderer, type ChunkWriter } from './chunk-render.js';
import { detachOnce } from './detach-protector.js';
import { lmdbEnvOptions } from './env-options.js';
import type { EarlyThreadData, OpenEnvironment, PartJob, PartMessage, ScanEncoder, SpareBuffer } from './scan-protocol.js';
import { rowKeyOf } from './scan-cursor.js';
import { TAG_COMPACT } from './compact-row.js';

// Before anything is compiled: every chunk's buffer is detached as it is moved (detach-protector.ts).
detachOnce();

/**
 * The Arrow and Avro encoders (apache-arrow, avsc) are loaded at a thread's first part that needs
 * them: they were half of a scan thread's start-up (124-138 ms of CPU against 65-81 without them),
 * which every CLI export paid, and a JSON export of the 1,000,000 bench rows took 1.42-1.45 s
 * against 1.31-1.36 s without them (four alternated pairs). Parts wait, in order, while one loads.
 */
let arrowEncoder: typeof import('./arrow-chunk.js') | undefined;
let avroEncoder: typeof import('./avro-chunk.js') | undefined;
let arrowLoading: Promise<void> | undefined;
let avroLoading: Promise<void> | undefined;

/** The load of an encoder, while it is not loaded; undefined when nothing is to wait for. */
function encoderLoad(encoder: ScanEncoder | undefined): Promise<void> | undefined {
  if (encoder === 'arrow' && arrowEncoder === undefined)
    return (arrowLoading ??= import('./arrow-chunk.js').then((m) => {
      arrowEncoder = m;
    }));
  if (encoder === 'avro' && avroEncoder === undefined)
    return (avroLoading ??= import('./avro-chunk.js').then((m) => {
      avroEncoder = m;
    }));
  return undefined;
}

/** The encoder a part's spec needs (none for row documents). */
function encoderOf(spec: PartJob['render']): ScanEncoder | undefined {
  return 'arrow' in spec ? 'arrow' : 'avro' in spec ? 'avro' : undefined;
}

// A thread started early for a scan whose format is known loads its encoder while it waits for
// its first part (scan-pool.ts startScanThreadEarly); a failure shows at that part.
encoderLoad((workerData as EarlyThreadData | null)?.encoder)?.catch(() => undefined);

/**
 * The environment the pool names in its first message (OpenEnvironment): a thread may start
 * before the command line knows its store (startScanThreadEarly, scan-pool.ts), so nothing is
 * opened until then. One that fails to open fails the thread, as a thread that cannot start does.
 */
let env: RootDatabase | undefined;
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
 * Keys likewise: lmdb-js copies every key out of its key buffer (binary keys); here the key stays
 * where it is, `bytes[start, end)` of that buffer, valid until the next read, and a Buffer view is
 * made only where a row needs one (cell rows; revisions 1 and 2's entity ids). Iteration with
 * values and keys in place: 3.5-4.6M entries/s against 2.1-3.1M with copied keys (same
 * micro-benchmark, 1,653,960 entries); a view per entry was still 5-8% of a scan thread.
 */
const currentKey: { bytes: Buffer; start: number; end: number } = { bytes: Buffer.alloc(0), start: 0, end: 0 };
const KEY_IN_PLACE = Symbol('key in currentKey');
function keyInPlace(target: Buffer, start: number, end: number): typeof KEY_IN_PLACE {
  currentKey.bytes = target;
  currentKey.start = start;
  currentKey.end = end;
  return KEY_IN_PLACE;
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
    if (env === undefined) throw new Error('the scan thread was given a part before its store');
    // Read-only here: the encoder only decodes (values are never written through this handle).
    const db = env.openDB<Buffer, Buffer>({ name: job.dbName, keyEncoding: 'binary', encoder: inPlaceValues } as never);
    replaceLmdbReadKey(db, keyInPlace);
    t = { layoutJson, layout: parseLayout(JSON.parse(layoutJson) as Record<string, unknown>), db };
    tables.set(job.dbName, t);
  }
  return t;
}

/**
 * Chunk buffers the main thread gave back once it sent them (scan-pool.ts), reused before a new
 * one is made. Bounded, since an idle thread keeps them (1 MiB each): 4 gave the same scan time
 * and full GCs as 8 (three 1,000,000-row scans: 0.37-0.41 s, 3 mark-compacts over four scans),
 * with 550-2,300 page faults a scan against 300-900; a buffer beyond them is left to the GC.
 */
const spares: Buffer[] = [];
const MAX_SPARES = 4;

/** A spare of at least `bytes` bytes, or undefined (one too small, from a scan with smaller chunks, is dropped). */
function spareOf(bytes: number): Buffer | undefined {
  for (let b = spares.pop(); b !== undefined; b = spares.pop()) if (b.length >= bytes) return b;
  return undefined;
}

function post(message: PartMessage, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(message, transfer);
}

/**
 * Posts the rows the renderer holds as one chunk; its own buffer is handed over (moved, not
 * copied) and it starts a new one. A function of the module, not a closure made by each part:
 * renderPart's optimized code checks the function it calls, and a new closure a part deoptimized it
 * at every part's end ("wrong call target": 40-90 of a 1,000,000-row export's 155 deopts, 35 left
 * without them, `--trace-deopt`; the export's time moved within its noise).
 */
function send(job: PartJob, renderer: ChunkRenderer | ChunkWriter): void {
  const chunk = renderer instanceof ChunkRenderer ? renderer.takeOwnedChunk() : ownedChunk(renderer.takeChunk());
  if (chunk === undefined) return;
  post({ job: job.job, bytes: chunk.buffer, length: chunk.length, rows: chunk.rows, cells: chunk.cells }, [chunk.buffer]);
}

function renderPart(job: PartJob): void {
  const cancelled = new Int32Array(job.cancel);
  if (Atomics.load(cancelled, 0) !== 0) return post({ job: job.job, done: true });
  const { layout, db } = tableOf(job);
  const spec = job.render;
  // Room for a chunk and the row that passes its size: every chunk's buffer is moved to the main
  // thread whole, so it should not be much larger than what it holds.
  const renderer =
    'avro' in spec
      ? new avroEncoder!.AvroChunkEncoder(layout, job.read, spec.avro, job.now, job.chunkBytes + 64 * 1024, true)
      : 'arrow' in spec
        ? new arrowEncoder!.ArrowChunkEncoder(layout, job.read, spec.arrow, job.now, true)
        : new ChunkRenderer(layout, job.read, spec, job.now, job.chunkBytes + 64 * 1024, spareOf);
  // The row of cell entries being rendered (spilled or legacy): its key prefix (escaped row key
  // and terminator), copied once per row, since the key buffer is overwritten by the next read.
  let prefix: Buffer | undefined;
  let rowEnd = 0;
  for (const _ of db.getRange({ start: job.start && Buffer.from(job.start), end: job.end && Buffer.from(job.end) })) {
    const { bytes: kb, start: ks, end: ke } = currentKey;
    if (prefix !== undefined && sameRowAt(prefix, kb, ks, ke)) {
      renderer.cell(kb.subarray(ks, ke), rowEnd, current.bytes, current.size);
      continue;
    }
    if (prefix !== undefined) {
      renderer.endRow();
      prefix = undefined;
    }
    if (renderer.length >= job.chunkBytes) {
      send(job, renderer);
      if (Atomics.load(cancelled, 0) !== 0) break;
    }
    if (current.bytes[0] === TAG_COMPACT) {
      // A compact row is its one entry, rendered from the key and value where they are. Only a row
      // entry's value starts with TAG_COMPACT (a cell value starts with its kind, 1 or 2:
      // ../cell-value.ts), and a row entry's key is its row prefix, so the key is not scanned for
      // its row's end first (a second pass over each key: the 1,000,000-row scan took 0.375 s
      // without it against 0.387 s, five alternated rounds).
      renderer.compactRowAt(kb, ks, ke, current.bytes);
      continue;
    }
    const end = rowEndAt(kb, ks, ke);
    rowEnd = end - ks;
    prefix = Buffer.from(kb.subarray(ks, end));
    renderer.beginRow(rowKeyOf(prefix, rowEnd));
    // A spilled row's marker holds no cell: its cells follow.
    if (end < ke) renderer.cell(kb.subarray(ks, ke), rowEnd, current.bytes, current.size);
  }
  if (Atomics.load(cancelled, 0) === 0) {
    if (prefix !== undefined) renderer.endRow();
    send(job, renderer);
  }
  // The renderer's buffer after its last chunk holds nothing sent: the next part can render into it.
  if (renderer instanceof ChunkRenderer && spares.length < MAX_SPARES) spares.push(renderer.buf);
  post({ job: job.job, done: true });
}

/** A chunk's bytes in an ArrayBuffer of their own (to be moved, not copied, to the main thread). */
function ownedChunk(chunk: RenderedChunk | undefined): { buffer: ArrayBuffer; length: number; rows: number; cells: number } | undefined {
  if (chunk === undefined) return undefined;
  const { bytes } = chunk;
  const own = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length;
  const buffer = own ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer;
  return { buffer, length: bytes.length, rows: chunk.rows, cells: chunk.cells };
}

/** Where the row part (`esc(rowKey) 00 00`) of the key in `b[start, end)` ends (an index into `b`). */
function rowEndAt(b: Buffer, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    if (b[i] !== 0) continue;
    if (b[i + 1] === 0) return i + 2;
    i++; // 00 FF: an escaped 00
  }
  throw new Error('corrupt key: no row terminator');
}

/** True when the key in `b[start, end)` belongs to the row whose prefix is `prefix`. */
function sameRowAt(prefix: Buffer, b: Buffer, start: number, end: number): boolean {
  if (end - start < prefix.length) return false;
  for (let i = prefix.length - 1; i >= 0; i--) if (prefix[i] !== b[start + i]) return false;
  return true;
}

function runPart(job: PartJob): void {
  try {
    renderPart(job);
  } catch (e) {
    post({ job: job.job, error: e instanceof Error ? e.message : String(e) });
  }
}

/** The parts waiting behind an encoder's load (run in the order they came), or undefined. */
let waiting: Promise<void> | undefined;

parentPort!.on('message', (message: OpenEnvironment | PartJob | SpareBuffer) => {
  if ('open' in message) {
    env = open(lmdbEnvOptions(message.open));
    return;
  }
  if ('spare' in message) {
    if (spares.length < MAX_SPARES) spares.push(Buffer.from(message.spare));
    return;
  }
  const job = message;
  const load = encoderLoad(encoderOf(job.render));
  if (waiting === undefined && load === undefined) return runPart(job);
  const queued: Promise<void> = (waiting ?? Promise.resolve())
    .then(() => load)
    .then(
      () => runPart(job),
      (e: unknown) => post({ job: job.job, error: `the scan thread could not load its encoder: ${e instanceof Error ? e.message : String(e)}` }),
    )
    .finally(() => {
      if (waiting === queued) waiting = undefined;
    });
  waiting = queued;
});
