/**
 * A batch of rows already encoded as the embedded store's compact rows (compact-row.ts), sorted
 * by key and packed into one buffer: `rowgate import` builds it on its parsing thread and hands
 * the buffer over without a copy, so the writing thread mostly puts bytes (LmdbStore.writePacked:
 * a new row of a compactOnly table is one put, an existing row is merged). Handing over the batch
 * as RowWrite objects instead cost 20% of the import's CPU in structured clone (profile of 200,000
 * rows x 5 cells).
 *
 * Rows are sorted by key because LMDB inserts in key order touch each B-tree page once per
 * transaction instead of once per row: 1,000,000 random-order puts of 450-byte rows in batches of
 * 100,000 ran at 85,000 rows/s sorted within each batch, against 37,000 with batches of 10,000
 * (synced commits, two in flight; .scratch micro-benchmark on this 2-core machine). The sort is
 * stable, so two lines of one row in a batch are applied in file order.
 *
 * Per row:  u16 prefix length | rowPrefix bytes | u32 encoded length | compact row of the row's cells
 *
 * Cells without a timestamp get the time the row is encoded here (the server time, once per row).
 * Rows the format does not carry (counter increments, which read the store; keys over the store's
 * limits, whose error Store.write reports; more cells than a compact row can count) make packRows
 * answer undefined, and the batch goes through Store.write.
 */
import type { RowWrite, TableLayout } from '../../model/types.js';
import type { PackedRows } from '../store.js';
import { cellKeyFits, rowPrefix } from './cell-key.js';
import { ByteWriter } from '../../bytes/byte-writer.js';
import { decodeCompactRow, encodeCompactRow, MAX_COMPACT_COLUMNS } from './compact-row.js';
import { RowModel } from './row-model.js';

/**
 * The compact row of a row's cells alone (cells without a timestamp at `now`, versions beyond
 * max_versions and cells past their TTL trimmed): what RowWriter stores for a row that does not
 * exist yet, and what a packed row carries. The caller checked the row has no counter increment.
 */
export function encodeRowCells(layout: TableLayout, row: RowWrite, now: number): Buffer {
  const model = new RowModel();
  model.apply(row.cells, layout.families, now);
  model.trim(layout.families, now);
  return encodeCompactRow(model);
}

/** The packed batch (Store.writePacked's PackedRows) in this store's form. */
export type PreparedBatch = PackedRows;

/**
 * Packs rows one at a time, as they are parsed: each row is encoded at once into one growing
 * buffer, so nothing of it but its bytes outlives the next row. Holding a batch's 50,000 rows as
 * objects until all were parsed made them survive young-generation collections: GC was 22% of a
 * parsing thread's profile (200,000 rows).
 */
export class BatchPacker {
  private readonly out: ByteWriter;
  /** Where each row's record starts in `out`, in input order. */
  private starts: number[] = [];
  /** Each row prefix's first six bytes as a number (-1 when shorter): most comparisons stop there. */
  private heads: number[] = [];
  /** Where the row beginRow started keeps its compact row's length. */
  private lengthAt = 0;

  constructor(
    private readonly layout: TableLayout,
    private readonly maxRowKeyBytes: number,
    expectedBytes = 64 * 1024,
  ) {
    this.out = new ByteWriter(expectedBytes);
  }

  /** Encodes and appends the row (cells without a timestamp get `now`); false (nothing appended) when it must go through Store.write instead. */
  add(row: RowWrite, now = Date.now()): boolean {
    if (row.rowKey.length > this.maxRowKeyBytes || row.cells.length > MAX_COMPACT_COLUMNS) return false;
    for (const cell of row.cells) {
      if (cell.kind === 'counter-increment') return false;
      // A row spilled to cell entries needs every cell key within LMDB's limit.
      if (!cellKeyFits(row.rowKey, cell.family, cell.qualifier)) return false;
    }
    // A row whose cells all expired at once is still written: it may change cells already stored.
    this.addEncoded(rowPrefix(row.rowKey), encodeRowCells(this.layout, row, now));
    return true;
  }

  /** Appends a row already encoded: its prefix key (cell-key.ts rowPrefix) and its compact row. */
  addEncoded(prefix: Uint8Array, compact: Uint8Array): void {
    const out = this.beginRow(prefix);
    out.bytes(compact);
    this.endRow(out);
  }

  /**
   * Starts a row of `prefix` whose compact row the caller then appends to the answered writer
   * (plain-line.ts writes it there in place); endRow(the answer) closes it.
   */
  beginRow(prefix: Uint8Array): ByteWriter {
    const out = this.out;
    const start = out.pos;
    out.room(6 + prefix.length);
    out.pos = out.buf.writeUInt16LE(prefix.length, start);
    out.bytes(prefix);
    this.starts.push(start);
    this.heads.push(headAt(out.buf, start, prefix.length));
    this.lengthAt = out.pos;
    out.pos += 4; // the compact row's length, known at endRow
    return out;
  }

  /** Closes the row beginRow started: its compact row ends at the writer's position. */
  endRow(out: ByteWriter): void {
    out.buf.writeUInt32LE(out.pos - this.lengthAt - 4, this.lengthAt);
  }

  /** The rows added, sorted by key, the rows of one key merged into one in input order, in a buffer of their own; the packer is empty again. */
  finish(): PreparedBatch {
    const { starts, heads } = this;
    const { buf, pos: end } = this.out;
    /**
     * Unsigned byte order of two rows' prefixes, six bytes at a time as numbers, in place (no view
     * of either prefix): pairs of one salt share many leading bytes in the bench's keys (a LONG
     * below 2^24 escapes to the same high bytes), and Buffer.compare of two new views took 10% of
     * a parsing thread with batches of 200,000. `from`: the bytes already known equal (the heads).
     */
    const compareAt = (a: number, b: number, from: number): number => {
      const pa = starts[a]! + 2;
      const pb = starts[b]! + 2;
      const la = buf.readUInt16LE(starts[a]!);
      const lb = buf.readUInt16LE(starts[b]!);
      const common = Math.min(la, lb);
      for (let off = from; off < common; off += 6) {
        const n = Math.min(6, common - off);
        const x = buf.readUIntBE(pa + off, n);
        const y = buf.readUIntBE(pb + off, n);
        if (x !== y) return x - y;
      }
      return la - lb;
    };
    /**
     * Whether the sort compared two rows of one key. A comparison sort compares every two rows
     * that end up next to each other (else it could not order them), so without it no key repeats
     * and the rows are copied without looking for repeats (a compare a row: 1-2% of finish).
     */
    let repeats = false;
    const compare = (a: number, b: number): number => {
      const ha = heads[a]!;
      const hb = heads[b]!;
      // Equal heads: their six bytes need no second look.
      const c = ha < 0 || hb < 0 ? compareAt(a, b, 0) : ha !== hb ? ha - hb : compareAt(a, b, 6);
      if (c === 0) repeats = true;
      return c;
    };
    let order = sortedByHeads(heads);
    if (order === undefined) order = starts.map((_, i) => i).sort(compare);
    else {
      // Rows whose heads' first 36 bits are equal came out in input order: put them in key order.
      for (let from = 0, to = 1; to <= order.length; to++) {
        if (to < order.length && top36(heads[order[to]!]!) === top36(heads[order[from]!]!)) continue;
        if (to - from > 1) order.splice(from, to - from, ...order.slice(from, to).sort(compare));
        from = to;
      }
    }
    const recordEnd = (i: number): number => (i + 1 < starts.length ? starts[i + 1]! : end);
    // A buffer of its own (not a slice of Node's pool), so the batch can be transferred. Merged
    // rows are never larger than their lines' records together, so `end` bytes are enough.
    const own = new Uint8Array(end);
    let out = 0;
    let rows = 0;
    for (let k = 0; k < order.length;) {
      const i = order[k]!;
      let to = k + 1;
      while (repeats && to < order.length && compare(i, order[to]!) === 0) to++;
      const merged = to - k > 1 ? this.mergedRecord(order.slice(k, to), recordEnd) : undefined;
      if (merged !== undefined) {
        own.set(merged, out);
        out += merged.length;
        rows++;
      } else {
        for (let m = k; m < to; m++) {
          const j = order[m]!;
          own.set(buf.subarray(starts[j]!, recordEnd(j)), out);
          out += recordEnd(j) - starts[j]!;
          rows++;
        }
      }
      k = to;
    }
    this.clear();
    return { bytes: out === end ? own : own.slice(0, out), rows };
  }

  /**
   * One record for several lines of one row (`group`, in input order): their compact rows merged
   * and trimmed as the store would merge them one after another (a later line's version replaces
   * an earlier one's of the same timestamp; max_versions and TTL applied once at the end, which
   * keeps the same versions: a version trimmed after an earlier line stays below max_versions
   * newer ones). Without it an import whose lines revisit rows made the writing thread read,
   * decode, merge and rewrite the row once a line (250,000 lines over 20,000 keys: 2.5-2.8x the
   * time of 250,000 new rows). undefined when the merged row has more columns than a compact row counts.
   */
  private mergedRecord(group: readonly number[], recordEnd: (i: number) => number): Buffer | undefined {
    const buf = this.out.buf;
    const first = group[0]!;
    const prefixLength = buf.readUInt16LE(this.starts[first]!);
    const compactAt = (i: number): Buffer => buf.subarray(this.starts[i]! + 2 + prefixLength + 4, recordEnd(i));
    const model = decodeCompactRow(compactAt(first));
    for (let m = 1; m < group.length; m++) model.merge(decodeCompactRow(compactAt(group[m]!)));
    model.trim(this.layout.families, Date.now());
    if (model.columns.length > MAX_COMPACT_COLUMNS) return undefined;
    const compact = encodeCompactRow(model);
    const head = this.starts[first]! + 2 + prefixLength;
    const record = Buffer.allocUnsafe(2 + prefixLength + 4 + compact.length);
    buf.copy(record, 0, this.starts[first]!, head);
    record.writeUInt32LE(compact.length, 2 + prefixLength);
    compact.copy(record, 2 + prefixLength + 4);
    return record;
  }

  /**
   * Drops the rows added: the packer is empty again, for the next batch. Its buffer is kept, since
   * memory touched for the first time costs a page fault per 4 KiB (0.2 us a 450-byte row here,
   * against 0.05 us to copy the row).
   */
  clear(): void {
    this.starts = [];
    this.heads = [];
    this.out.pos = 0;
  }
}

/** The first six bytes of the `prefixLength`-byte prefix of the row record at `at` as a number, -1 when the prefix is shorter. */
function headAt(buf: Buffer, at: number, prefixLength: number): number {
  return prefixLength >= 6 ? buf.readUIntBE(at + 2, 6) : -1;
}

/** Rows a float sort can number: the row index takes the 17 low bits of a key (36 + 17 = 53). */
const FLOAT_SORT_ROWS = 1 << 17;

function top36(head: number): number {
  return Math.floor(head / 4096);
}

/**
 * The rows' order by the first 36 bits of their heads (rows of equal bits in input order), from a
 * native sort of numbers: each row's 36 bits and index as one exact double. finish() of a
 * 100,000-row import part took 1.18-1.32 us a row with a comparator sort, 0.89-0.99 with this;
 * salted keys seldom share 36 bits (two bytes of salt, then the key's own). undefined when a head
 * is missing (a prefix under 6 bytes) or the rows are too many to number.
 */
function sortedByHeads(heads: readonly number[]): number[] | undefined {
  const n = heads.length;
  if (n > FLOAT_SORT_ROWS) return undefined;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const head = heads[i]!;
    if (head < 0) return undefined;
    keys[i] = top36(head) * FLOAT_SORT_ROWS + i;
  }
  keys.sort();
  const order = new Array<number>(n);
  for (let k = 0; k < n; k++) order[k] = keys[k]! % FLOAT_SORT_ROWS;
  return order;
}

/** The rows packed, sorted by key, or undefined when one of them must go through Store.write. */
export function packRows(rows: readonly RowWrite[], layout: TableLayout, maxRowKeyBytes: number): PreparedBatch | undefined {
  const packer = new BatchPacker(layout, maxRowKeyBytes);
  for (const row of rows) if (!packer.add(row)) return undefined;
  return packer.finish();
}

/** The rows of a packed batch, in packed (key) order: views of the batch's bytes (a merge of one run). */
export function preparedRows(batch: PreparedBatch): Generator<{ prefix: Buffer; encoded: Buffer }> {
  return mergedRows([batch]);
}

/** A sorted run being merged: the row at `pos` of its bytes. */
interface RunCursor {
  readonly bytes: Buffer;
  /** The run's place among the runs: rows of one key come out in run order (input order). */
  readonly run: number;
  pos: number;
  prefixLength: number;
  /** The prefix's first six bytes as a number (-1 when shorter), as BatchPacker's sort compares them. */
  head: number;
}

/**
 * The rows of several packed batches (each sorted, stably, by BatchPacker.finish) in one key
 * order: a k-way merge on a binary heap. Rows of one key keep their input order: a run's before
 * a later run's, and within a run as packed. Views of the batches' bytes.
 */
export function* mergedRows(runs: readonly PreparedBatch[]): Generator<{ prefix: Buffer; encoded: Buffer }> {
  const heap: RunCursor[] = [];
  for (let run = 0; run < runs.length; run++) {
    const bytes = Buffer.from(runs[run]!.bytes.buffer, runs[run]!.bytes.byteOffset, runs[run]!.bytes.byteLength);
    const cursor: RunCursor = { bytes, run, pos: 0, prefixLength: 0, head: -1 };
    if (bytes.length > 0) {
      readHead(cursor);
      heap.push(cursor);
      siftUp(heap, heap.length - 1);
    }
  }
  while (heap.length > 0) {
    const top = heap[0]!;
    const { bytes, pos, prefixLength } = top;
    const prefixEnd = pos + 2 + prefixLength;
    const length = bytes.readUInt32LE(prefixEnd);
    const next = prefixEnd + 4 + length;
    yield { prefix: bytes.subarray(pos + 2, prefixEnd), encoded: bytes.subarray(prefixEnd + 4, next) };
    if (next < bytes.length) {
      top.pos = next;
      readHead(top);
    } else {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    if (heap.length > 0) siftDown(heap, 0);
  }
}

function readHead(c: RunCursor): void {
  c.prefixLength = c.bytes.readUInt16LE(c.pos);
  c.head = headAt(c.bytes, c.pos, c.prefixLength);
}

/** Whether `a`'s row comes before `b`'s: key bytes, then run. */
function before(a: RunCursor, b: RunCursor): boolean {
  if (a.head >= 0 && b.head >= 0 && a.head !== b.head) return a.head < b.head;
  const from = a.head >= 0 && b.head >= 0 ? 6 : 0;
  const cmp = a.bytes.compare(b.bytes, b.pos + 2 + from, b.pos + 2 + b.prefixLength, a.pos + 2 + from, a.pos + 2 + a.prefixLength);
  return cmp !== 0 ? cmp < 0 : a.run < b.run;
}

function siftUp(heap: RunCursor[], i: number): void {
  const c = heap[i]!;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(c, heap[parent]!)) break;
    heap[i] = heap[parent]!;
    i = parent;
  }
  heap[i] = c;
}

function siftDown(heap: RunCursor[], i: number): void {
  const c = heap[i]!;
  const n = heap.length;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap[child + 1]!, heap[child]!)) child++;
    if (!before(heap[child]!, c)) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = c;
}
