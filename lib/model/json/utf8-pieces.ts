/**
 * Bytes arriving in pieces, decoded as UTF-8 and refused when they are not UTF-8: a replacement
 * character in place of a bad sequence would silently change the data written. A sequence cut
 * between two pieces is decoded whole; a byte order mark is kept (it is not JSON whitespace, so a
 * text starting with one is refused by the JSON parser, however it was cut).
 */
import { rgError } from '../../errors.js';

/** The longest UTF-8 sequence is 4 bytes: at most 3 of one can end a piece unfinished. */
const TAIL = 3;

export class Utf8Pieces {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  /** Bytes decoded before the current piece, and the last few of them (to locate an error). */
  private bytes = 0;
  private tail = new Uint8Array(0);

  /** @param what names the text in errors ("request body"). */
  constructor(private readonly what: string) {}

  decode(piece: Uint8Array): string {
    let text: string;
    try {
      text = this.decoder.decode(piece, { stream: true });
    } catch {
      throw this.invalid(piece, false);
    }
    const kept = Math.min(TAIL, this.tail.length + piece.length);
    const joined = new Uint8Array(kept);
    const fromPiece = Math.min(kept, piece.length);
    joined.set(this.tail.subarray(this.tail.length - (kept - fromPiece)), 0);
    joined.set(piece.subarray(piece.length - fromPiece), kept - fromPiece);
    this.tail = joined;
    this.bytes += piece.length;
    return text;
  }

  /** The end of the bytes: a sequence left unfinished is refused. */
  end(): string {
    try {
      return this.decoder.decode();
    } catch {
      throw this.invalid(new Uint8Array(0), true);
    }
  }

  /** The error, naming the offset of the first byte of the bad sequence. */
  private invalid(piece: Uint8Array, atEnd: boolean) {
    const bytes = new Uint8Array(this.tail.length + piece.length);
    bytes.set(this.tail, 0);
    bytes.set(piece, this.tail.length);
    // Continuation bytes at the start of the tail finish a sequence decoded before it.
    let start = 0;
    while (start < this.tail.length && (bytes[start]! & 0xc0) === 0x80) start++;
    const bad = firstInvalid(bytes, start, atEnd);
    const offset = this.bytes - this.tail.length + (bad < 0 ? start : bad);
    return rgError('RG_ERR_BAD_BODY', `${this.what} is not valid UTF-8: a bad byte sequence at byte ${offset}`);
  }
}

const wholeDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Bytes that must be UTF-8 as a whole (a line of an import), decoded; refused naming the bad byte. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return wholeDecoder.decode(bytes);
  } catch {
    const bad = firstInvalid(bytes, 0, true);
    throw rgError('RG_ERR_BAD_BODY', `${what} is not valid UTF-8: a bad byte sequence at byte ${Math.max(0, bad)}`);
  }
}

/**
 * Index of the first byte of the first sequence that is not UTF-8 (Unicode 15, table 3-7), or -1.
 * A sequence cut by the end of `b` counts as bad only when `atEnd`.
 */
export function firstInvalid(b: Uint8Array, from: number, atEnd: boolean): number {
  let i = from;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      if (i + k >= b.length) return atEnd ? i : -1;
      const d = b[i + k]!;
      if (d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return -1;
}
