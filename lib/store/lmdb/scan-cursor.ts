/**
 * The walk both LMDB scans share (row batches and rendered chunks): the entries of a key range
 * grouped into rows (a compact row's one entry, or a spilled or legacy row's cell entries), a
 * row-key filter, the row limit, and one release path (finish) that closes the LMDB iterator and
 * the open-scan count exactly once.
 */
import type { RowKeyFilter } from '../store.js';
import { rowKeyEnd, unescape } from './cell-key.js';
import { TAG_COMPACT } from './compact-row.js';

export interface Entry {
  readonly key: Buffer;
  readonly value: Buffer;
}

/** What a scan does with each row it walks. */
export interface RowVisitor {
  /**
   * A compact row (compact-row.ts): its one entry's value is `value[0, value.length)`; `key` is
   * its row key, or with `escaped` the entry's key (the row prefix). Returns whether it was kept.
   */
  compactRow(key: Buffer, value: Buffer, keepEmpty: boolean, escaped: boolean): boolean;
  /** A row stored as cell entries: beginRow, then cell for each entry in stored order, then endRow (whether it was kept). */
  beginRow(rowKey: Buffer): void;
  cell(key: Buffer, rowEnd: number, value: Buffer, valueEnd: number): void;
  endRow(): boolean;
}

/** True when `key` is a row entry (`esc(rowKey) 00 00` and nothing after): a compact row or a spilled row's marker. */
export function isRowEntry(key: Uint8Array, rowEnd: number): boolean {
  return rowEnd === key.length;
}

/** A scan the store can end from outside (LmdbStore.close): its reader then gets `reason`. */
export interface AbandonableScan {
  abandon(reason: Error): void;
}

export class ScanCursor implements AbandonableScan {
  /** Rows still to return (Infinity for limit -1). */
  remaining: number;
  finished = false;
  /** Why the scan was ended before its reader finished it (abandon); its next read throws it. */
  failure: Error | undefined;
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
   * Closes the LMDB iterator now, while the environment is still open, and fails the next read
   * with `reason`: a reader that comes back after the store closed (a response torn down a tick
   * later) must not touch the cursor, whose close then crashed the process (SIGSEGV in
   * mdb_cursor_close, 19 of 30 runs of a scan stopped by gateway and store close).
   */
  abandon(reason: Error): void {
    if (this.finished) return;
    this.failure = reason;
    this.finish();
  }

  /**
   * Walks the next row that passes the filter through `visitor`. Returns whether the visitor kept
   * it, or undefined at the end of the range.
   */
  nextRow(visitor: RowVisitor): boolean | undefined {
    for (;;) {
      const first = this.pending ?? this.nextEntry();
      this.pending = undefined;
      if (!first) return undefined;
      const rowEnd = rowKeyEnd(first.key);
      const rowEntry = isRowEntry(first.key, rowEnd);
      if (rowEntry && first.value[0] === TAG_COMPACT) {
        // A compact row has no cell entries; anything after it up to the next row is skipped.
        this.skipRest(first.key, rowEnd);
        if (this.filter === undefined) return visitor.compactRow(first.key, first.value, false, true);
        const rowKey = rowKeyOf(first.key, rowEnd);
        if (this.filter.matches(rowKey)) return visitor.compactRow(rowKey, first.value, false, false);
        continue;
      }
      const rowKey = rowKeyOf(first.key, rowEnd);
      const wanted = this.filter === undefined || this.filter.matches(rowKey);
      if (wanted) visitor.beginRow(rowKey);
      // A spilled row's marker entry holds no cell: its cells follow.
      let entry: Entry | undefined = rowEntry ? this.nextInRow(first.key, rowEnd) : first;
      while (entry !== undefined) {
        if (wanted) visitor.cell(entry.key, rowEnd, entry.value, entry.value.length);
        entry = this.nextInRow(first.key, rowEnd);
      }
      if (wanted) return visitor.endRow();
    }
  }

  /** The next entry if it belongs to the row of `first[0, rowEnd)`; otherwise it is kept for the next row. */
  private nextInRow(first: Buffer, rowEnd: number): Entry | undefined {
    const next = this.nextEntry();
    if (!next) return undefined;
    if (sameRow(first, next.key, rowEnd)) return next;
    this.pending = next;
    return undefined;
  }

  private skipRest(first: Buffer, rowEnd: number): void {
    while (this.nextInRow(first, rowEnd) !== undefined);
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
      if (cursor.failure !== undefined) throw cursor.failure;
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
