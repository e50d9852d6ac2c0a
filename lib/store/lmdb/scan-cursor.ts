/**
 * The walk both LMDB scans share (row batches and rendered chunks): cell entries of a key range
 * grouped into rows, a row-key filter, the row limit, and one release path (finish) that closes
 * the LMDB iterator and the open-scan count exactly once.
 */
import type { RowKeyFilter } from '../store.js';
import { rowKeyEnd, unescape } from './cell-key.js';

export interface Entry {
  readonly key: Buffer;
  readonly value: Buffer;
}

export class ScanCursor {
  /** Rows still to return (Infinity for limit -1). */
  remaining: number;
  finished = false;
  private pending: Entry | undefined;

  constructor(
    private readonly entries: Iterator<unknown>,
    limit: number,
    private readonly filter: RowKeyFilter | undefined,
    private readonly onFinish: () => void,
  ) {
    this.remaining = limit < 0 ? Infinity : limit;
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.onFinish();
    this.entries.return?.();
  }

  /**
   * Walks the next row that passes the filter: `begin(rowKey)` first, then `cell` for each of its
   * entries in stored order. Returns false at the end of the range.
   */
  nextRow(begin: (rowKey: Buffer) => void, cell: (entry: Entry, rowEnd: number) => void): boolean {
    for (;;) {
      const first = this.pending ?? this.nextEntry();
      this.pending = undefined;
      if (!first) return false;
      const rowEnd = rowKeyEnd(first.key);
      const rowKey = rowKeyOf(first.key, rowEnd);
      const wanted = this.filter === undefined || this.filter.matches(rowKey);
      if (wanted) begin(rowKey);
      let entry: Entry = first;
      for (;;) {
        if (wanted) cell(entry, rowEnd);
        const next = this.nextEntry();
        if (!next) break;
        if (!sameRow(first.key, next.key, rowEnd)) {
          this.pending = next;
          break;
        }
        entry = next;
      }
      if (wanted) return true;
    }
  }

  private nextEntry(): Entry | undefined {
    const r = this.entries.next();
    return r.done ? undefined : (r.value as Entry);
  }
}

/**
 * The row key of a cell key whose row part ends at `rowEnd`: a view when nothing is escaped (the
 * common case; keys from an LMDB iterator are copies the cursor owns), else unescaped. unescape's
 * copy was 5% of a scan thread's profile.
 */
export function rowKeyOf(key: Buffer, rowEnd: number): Buffer {
  const end = rowEnd - 2;
  for (let i = 0; i < end; i++) if (key[i] === 0) return unescape(key, 0, rowEnd);
  return key.subarray(0, end);
}

/** True when `key` belongs to the row whose escaped key with terminator is `first[0, rowEnd)`. */
export function sameRow(first: Buffer, key: Buffer, rowEnd: number): boolean {
  if (key.length < rowEnd) return false;
  // Compared from the end: keys of neighbouring rows share long prefixes (hash, leading components).
  for (let i = rowEnd - 1; i >= 0; i--) if (first[i] !== key[i]) return false;
  return true;
}

/**
 * The async iterator over a cursor: `fill` reads one batch synchronously (LMDB reads are sync),
 * undefined when nothing is left; the cursor is finished at the end, on error and on return().
 */
export function cursorBatches<T>(cursor: ScanCursor, fill: () => T | undefined): AsyncIterableIterator<T> & { return(): Promise<IteratorResult<T>> } {
  const iterator = {
    next: async (): Promise<IteratorResult<T>> => {
      if (cursor.finished) return { done: true, value: undefined };
      try {
        const batch = fill();
        if (cursor.remaining <= 0 || batch === undefined) cursor.finish();
        return batch === undefined ? { done: true, value: undefined } : { done: false, value: batch };
      } catch (e) {
        cursor.finish();
        throw e;
      }
    },
    return: async (): Promise<IteratorResult<T>> => {
      cursor.finish();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
