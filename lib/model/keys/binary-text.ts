/**
 * Text forms of raw row keys: lowercase hex and HBase's `Bytes.toStringBinary` escaping
 * (docs/data-model.md, "Row keys as text"). Parsing is strict: anything HBase would silently mangle is rejected.
 */
import { rgError } from '../../errors.js';

/** Quotes user input for an error message, cut short so a huge parameter cannot bloat the reply. */
export function quoteInput(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}...` : text);
}

export function toHex(buf: Uint8Array): string {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('hex');
}

const HEX_TEXT = /^[0-9a-fA-F]*$/;

/** Hex of either case, even length; `what` names the input in errors (e.g. "rowkey_hex"). */
export function fromHex(text: string, what: string): Buffer {
  if (!HEX_TEXT.test(text)) {
    const at = text.search(/[^0-9a-fA-F]/);
    throw rgError('RG_ERR_BAD_ROW_KEY', `${what} ${quoteInput(text)} has a non-hex character ${JSON.stringify(text[at])} at position ${at}`);
  }
  if (text.length % 2 !== 0) {
    throw rgError('RG_ERR_BAD_ROW_KEY', `${what} ${quoteInput(text)} has an odd number of hex digits (${text.length})`);
  }
  // Buffer.from stops silently at bad input, hence the checks above.
  return Buffer.from(text, 'hex');
}

/** One output piece per byte value, so encoding is a table lookup. */
const ESCAPED: readonly string[] = Array.from({ length: 256 }, (_, b) =>
  b >= 0x20 && b <= 0x7e && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`,
);

function isPlain(b: number): boolean {
  return b >= 0x20 && b <= 0x7e && b !== 0x5c;
}

/** HBase `Bytes.toStringBinary`: printable ASCII except `\` as is, every other byte `\xHH` (uppercase). */
export function toStringBinary(buf: Uint8Array): string {
  let i = 0;
  while (i < buf.length && isPlain(buf[i]!)) i++;
  if (i === buf.length) return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1');
  let out = Buffer.from(buf.buffer, buf.byteOffset, i).toString('latin1');
  for (; i < buf.length; i++) out += ESCAPED[buf[i]!];
  return out;
}

/** The value of a hex digit's character code (either case), -1 for any other. */
export function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * Inverse of toStringBinary. `\xHH` takes hex digits of either case; a backslash starting
 * anything else, and any character outside 0x20-0x7E, is an error (HBase would drop or
 * truncate them, silently addressing another row).
 */
export function fromStringBinary(text: string, what = 'row key'): Buffer {
  const out = Buffer.allocUnsafe(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) {
      const hi = text.charCodeAt(i + 1) === 0x78 ? hexDigit(text.charCodeAt(i + 2)) : -1;
      const lo = hi < 0 ? -1 : hexDigit(text.charCodeAt(i + 3));
      if (lo < 0) {
        throw rgError(
          'RG_ERR_BAD_ROW_KEY',
          `${what} ${quoteInput(text)} has a backslash at position ${i} that does not start an escape \\xHH (write a backslash as \\x5C)`,
        );
      }
      out[n++] = (hi << 4) | lo;
      i += 3;
    } else if (c < 0x20 || c > 0x7e) {
      const cp = text.codePointAt(i)!;
      throw rgError(
        'RG_ERR_BAD_ROW_KEY',
        `${what} ${quoteInput(text)} has the character U+${cp.toString(16).toUpperCase().padStart(4, '0')} at position ${i}: bytes outside printable ASCII must be escaped as \\xHH`,
      );
    } else {
      out[n++] = c;
    }
  }
  return out.subarray(0, n);
}
