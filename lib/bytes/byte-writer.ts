/**
 * A growable output buffer that tracks its write position: UTF-8 or Latin-1 text and binary
 * fields appended in place, the buffer doubled when it runs out. Used where many small pieces are
 * encoded into one buffer instead of concatenated: compact rows (store/lmdb/compact-row.ts), the
 * import's packed batches (store/lmdb/prepared-batch.ts), the request log (logging/log-sink.ts).
 */
/** Bytes of a non-negative integer's decimal digits. */
export function digitCount(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

export class ByteWriter {
  buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  /** Makes room for `n` more bytes after `pos`. */
  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /** Appends `s` as UTF-8 (a UTF-16 unit is at most 3 bytes). */
  text(s: string): void {
    this.room(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** Appends `s`, whose characters are all below U+0100, a byte each. */
  ascii(s: string): void {
    this.room(s.length);
    this.pos += this.buf.write(s, this.pos, 'latin1');
  }

  /**
   * Appends `s`, whose characters are all below U+0100, a byte each, copied in a loop: for the
   * short texts of a log line (a 36-character request id) cheaper than a call into buf.write.
   */
  shortAscii(s: string): void {
    const n = s.length;
    this.room(n);
    const buf = this.buf;
    const at = this.pos;
    for (let i = 0; i < n; i++) buf[at + i] = s.charCodeAt(i);
    this.pos = at + n;
  }

  /** Appends a non-negative safe integer's decimal digits (as String(n) writes them). */
  decimal(n: number): void {
    const digits = digitCount(n);
    this.room(digits);
    const buf = this.buf;
    let at = this.pos + digits;
    this.pos = at;
    do {
      const next = Math.floor(n / 10);
      buf[--at] = 48 + (n - next * 10);
      n = next;
    } while (n > 0);
  }

  /**
   * Appends `src[start, end)`, copied in a loop: for the short names and values of an import line
   * (plain-line.ts) cheaper than a view of them and a set.
   */
  range(src: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    const buf = this.buf;
    let at = this.pos;
    for (let q = start; q < end; q++) buf[at++] = src[q]!;
    this.pos = at;
  }

  /** Appends one byte. */
  byte(c: number): void {
    this.room(1);
    this.buf[this.pos++] = c;
  }

  /** Appends the bytes of `b`. */
  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}
