/**
 * Large scans on several threads, sent in row order. A scan's key range is split into parts of
 * whole rows (range-split.ts); scan workers (scan-worker.ts) render parts ahead of the one being
 * sent, at most AHEAD_PER_THREAD parts per thread (or the Arrow spec's aheadParts) on at most
 * the pool's threads (or the Arrow spec's threads), so memory
 * stays bounded and a slow client stops the workers instead of filling memory. One JavaScript
 * thread renders about 110,000 rows/s of the benchmark table while LMDB iteration alone runs at
 * 330,000 (bench/README.md, scenario 1): rendering, not the store, bounds a single-thread export.
 *
 * Each part is read in its own LMDB read transaction: rows are never torn, but a scan that runs
 * while others write may see one part before a write and the next after it, as HBase and Bigtable
 * scanners do (row-level atomicity).
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ReadSpec } from '../../model/types.js';
import type { ChunkScan, ChunkSpec, RenderedChunk } from '../store.js';
import type { KeyRange } from './range-split.js';
import type { AbandonableScan } from './scan-cursor.js';
import type { EarlyThreadData, OpenEnvironment, PartJob, PartMessage, ScanEncoder, SpareBuffer } from './scan-protocol.js';

/** Parts rendered ahead of the one being sent, per thread: 2 keeps every thread busy while one part is sent. */
const AHEAD_PER_THREAD = 2;

// Under the test runner this module is TypeScript source; workers inherit its loader flags.
const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './scan-worker.ts' : './scan-worker.js', import.meta.url);

/** Threads started by startScanThreadEarly and not yet taken by a pool. */
const earlyThreads: Worker[] = [];

/** Threads a store's pool has unless configured (LmdbStoreOptions.scanThreads): two cores already reach the export target; more mostly queue. */
export function defaultScanThreads(): number {
  return Math.min(availableParallelism(), MAX_DEFAULT_SCAN_THREADS);
}
const MAX_DEFAULT_SCAN_THREADS = 4;

/** Stored bytes (the table's LMDB pages) from which a whole-range scan goes to the pool: ~8 MB stored renders in ~30 ms on the calling thread. */
export const PARALLEL_MIN_BYTES = 8 * 1024 * 1024;

/**
 * Starts one scan thread for the store at `path` before it is open, when a whole-table scan of it
 * would run on the pool (its data file holds at least PARALLEL_MIN_BYTES and it has threads), for
 * the first pool that needs a thread to take; with `encoder`, the thread loads it meanwhile. Its
 * start-up (~90 ms: Node's own, then lmdb-js and the renderers' modules, then the encoder) then
 * runs on another core while the command's modules load: `rowgate export` calls it once its flags
 * ask for a whole table. The 1,000,000-row Parquet export took 1.067 s against 1.103 s (24
 * alternated pairs; 1.8-3.8% in four runs of 10-24 pairs). The thread opens nothing until a pool
 * names its store (OpenEnvironment); one no pool takes ends with the process, and an export of a
 * smaller store or with a --limit starts none (`export --limit 1`: 0.138 s either way).
 */
export function startScanThreadEarly(path: string, scanThreads: number = defaultScanThreads(), encoder?: ScanEncoder): void {
  if (scanThreads < 2) return;
  const data = statSync(join(path, 'data.mdb'), { throwIfNoEntry: false });
  if (data === undefined || data.size < PARALLEL_MIN_BYTES) return;
  let worker: Worker;
  try {
    worker = new Worker(WORKER_URL, { workerData: { encoder } satisfies EarlyThreadData });
  } catch {
    return; // The pool starts its own, and reports why that fails.
  }
  worker.unref();
  const drop = (): void => {
    const i = earlyThreads.indexOf(worker);
    if (i >= 0) earlyThreads.splice(i, 1);
  };
  worker.once('error', drop);
  worker.once('exit', drop);
  earlyThreads.push(worker);
}

/** Threads started early that no pool has taken yet (tests). */
export function scanThreadsStartedEarly(): number {
  return earlyThreads.length;
}

interface PoolWorker {
  readonly worker: Worker;
  outstanding: number;
}

/** A part's chunk as the pool hands it on: its message, and how its buffer goes back to the worker that rendered it. */
type ChunkHandler = (m: PartMessage, giveBack?: () => void) => void;

export interface PoolScanRequest {
  readonly dbName: string;
  readonly layoutJson: string;
  readonly read: ReadSpec;
  readonly render: ChunkSpec;
  readonly now: number;
  readonly ranges: readonly KeyRange[];
  readonly chunkBytes: number;
  /** Called once when the scan ends, fails or is abandoned. */
  readonly onFinish: () => void;
}

export class ScanPool {
  private readonly workers: PoolWorker[] = [];
  private readonly jobs = new Map<number, { worker: PoolWorker; onMessage: ChunkHandler }>();
  private nextJob = 1;
  private closed = false;
  /** Set when a worker could not start or crashed: later scans run on the calling thread. */
  failure: string | undefined;
  /** Parts handed to workers since start, and parts whose every chunk was handed on to the consumer (tests check the read-ahead bound: their difference). */
  partsSubmitted = 0;
  partsDelivered = 0;
  /** Chunk buffers given back to the workers once sent (tests check that scans over HTTP do). */
  buffersGivenBack = 0;

  constructor(
    private readonly path: string,
    readonly threads: number,
  ) {}

  scan(request: PoolScanRequest): ChunkScan & AbandonableScan {
    return new PoolScan(this, request);
  }

  /** Parts queued or being rendered by the workers. */
  get busy(): number {
    return this.jobs.size;
  }

  /** Workers started so far (they start as parts first need them, up to `threads`). */
  get started(): number {
    return this.workers.length;
  }

  /**
   * Queues one part on the least busy of the first `threads` workers (at most the pool's; all by
   * default); `onMessage` gets its chunks, then done or error.
   */
  submit(job: Omit<PartJob, 'job'>, onMessage: ChunkHandler, threads = this.threads): void {
    const worker = this.leastBusy(threads);
    const id = this.nextJob++;
    worker.outstanding++;
    this.partsSubmitted++;
    this.jobs.set(id, { worker, onMessage });
    worker.worker.postMessage({ ...job, job: id } satisfies PartJob);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = this.workers.splice(0);
    await Promise.all(all.map((w) => w.worker.terminate()));
  }

  private leastBusy(threads: number): PoolWorker {
    if (this.closed) throw new Error('the scan pool is closed');
    if (this.workers.length < threads) return this.spawn();
    let best = this.workers[0]!;
    for (let i = 1; i < threads; i++) if (this.workers[i]!.outstanding < best.outstanding) best = this.workers[i]!;
    return best;
  }

  /**
   * Moves a sent chunk's buffer back to the worker that rendered it, which renders its next
   * chunks into it. Without this every chunk was a new 1 MiB buffer: the main thread received
   * ~370 a scan of the benchmark table, and their memory, counted as V8 external memory, set off
   * a full GC every 60 MB or so (`--trace-gc`, four scans: 19 mark-compacts taking 210 ms, against
   * 3 taking 16 ms with the buffers given back; the export ran at 1.7-2.2x PostgreSQL, then 2.6-2.7x).
   */
  private giveBack(pw: PoolWorker, buffer: ArrayBuffer): void {
    // A buffer already given back is detached (0 bytes): a second release does nothing.
    if (this.closed || !this.workers.includes(pw) || buffer.byteLength === 0) return;
    this.buffersGivenBack++;
    pw.worker.postMessage({ spare: buffer } satisfies SpareBuffer, [buffer]);
  }

  private spawn(): PoolWorker {
    let worker: Worker;
    try {
      worker = earlyThreads.shift() ?? new Worker(WORKER_URL);
    } catch (e) {
      this.failure ??= (e as Error).message;
      throw e;
    }
    worker.postMessage({ open: this.path } satisfies OpenEnvironment);
    // Idle workers must not keep a CLI command or a stopping server alive.
    worker.unref();
    const pw: PoolWorker = { worker, outstanding: 0 };
    worker.on('message', (m: PartMessage) => {
      const job = this.jobs.get(m.job);
      if (job === undefined) return;
      if (!('bytes' in m)) {
        this.jobs.delete(m.job);
        pw.outstanding--;
        job.onMessage(m);
        return;
      }
      job.onMessage(m, () => this.giveBack(pw, m.bytes));
    });
    const fail = (why: string): void => {
      const i = this.workers.indexOf(pw);
      if (i >= 0) this.workers.splice(i, 1);
      for (const [id, job] of this.jobs) {
        if (job.worker !== pw) continue;
        this.jobs.delete(id);
        job.onMessage({ job: id, error: why });
      }
    };
    worker.on('error', (e) => {
      this.failure ??= e.message;
      fail(`scan worker failed: ${e.message}`);
    });
    worker.on('exit', (code) => fail(`scan worker exited (code ${code})`));
    this.workers.push(pw);
    return pw;
  }
}

interface PartState {
  readonly chunks: RenderedChunk[];
  done: boolean;
  error?: string;
}

class PoolScan implements ChunkScan, AbandonableScan {
  private readonly parts: PartState[];
  private readonly cancel = new SharedArrayBuffer(4);
  private sending = 0;
  private submitted = 0;
  private finished = false;
  /** Why the scan was ended before its reader finished it (abandon); its next read throws it. */
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  /** Parts submitted at most beyond the one being sent. */
  private readonly ahead: number;
  /** Workers this scan's parts go to (the Arrow spec's threads, at most the pool's). */
  private readonly threads: number;

  constructor(
    private readonly pool: ScanPool,
    private readonly request: PoolScanRequest,
  ) {
    this.parts = request.ranges.map(() => ({ chunks: [], done: false }));
    const arrow = 'arrow' in request.render ? request.render.arrow : undefined;
    this.threads = Math.max(1, Math.min(pool.threads, arrow?.threads ?? pool.threads));
    this.ahead = this.threads * (arrow?.aheadParts ?? AHEAD_PER_THREAD);
    // The threads start on the first parts now, not at the first read: an export loads its writer
    // meanwhile (tools/support/export-parquet.ts: with the next, 1.063 s against 1.105 s).
    this.submitAhead();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<RenderedChunk>> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure;
      if (this.finished) return { done: true, value: undefined };
      this.submitAhead();
      const part = this.parts[this.sending];
      if (part === undefined) {
        this.finish();
        return { done: true, value: undefined };
      }
      if (part.error !== undefined) {
        this.finish();
        throw new Error(part.error);
      }
      const chunk = part.chunks.shift();
      if (chunk !== undefined) return { done: false, value: chunk };
      if (part.done) {
        this.sending++;
        this.pool.partsDelivered++;
        continue;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  async return(): Promise<IteratorResult<RenderedChunk>> {
    this.finish();
    return { done: true, value: undefined };
  }

  /** Ends the scan (its workers stop at their next check) and fails a reader waiting or coming back with `reason`. */
  abandon(reason: Error): void {
    if (this.finished) return;
    this.failure = reason;
    this.finish();
  }

  private submitAhead(): void {
    while (this.submitted < this.parts.length && this.submitted < this.sending + this.ahead) {
      const index = this.submitted++;
      const range = this.request.ranges[index]!;
      const { dbName, layoutJson, read, render, now, chunkBytes } = this.request;
      try {
        this.pool.submit(
          { dbName, layoutJson, read, render, now, chunkBytes, start: range.start, end: range.end, cancel: this.cancel },
          (m, giveBack) => this.onMessage(index, m, giveBack),
          this.threads,
        );
      } catch (e) {
        this.onMessage(index, { job: 0, error: e instanceof Error ? e.message : String(e) });
      }
    }
  }

  private onMessage(index: number, m: PartMessage, giveBack?: () => void): void {
    if (this.finished) return;
    const part = this.parts[index]!;
    if ('bytes' in m) part.chunks.push({ bytes: Buffer.from(m.bytes, 0, m.length), rows: m.rows, cells: m.cells, release: giveBack });
    else if ('error' in m) part.error = m.error;
    else part.done = true;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    Atomics.store(new Int32Array(this.cancel), 0, 1);
    for (const part of this.parts) part.chunks.length = 0;
    this.request.onFinish();
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
