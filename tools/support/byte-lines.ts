/**
 * The lines of a byte stream as bytes (NDJSON input of `rowgate import`), each without its LF and
 * a CR before it. Lines are cut on the byte 0x0A, which is never part of a longer UTF-8 sequence,
 * and decoded by the caller: readline decoded them itself, putting U+FFFD in place of bytes that
 * are not UTF-8, so a line a POST refuses (400, not UTF-8) was imported altered.
 */
export async function* byteLines(input: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  /** The start of a line that began in an earlier chunk. */
  let carried: Buffer[] = [];
  for await (const chunk of input) {
    let from = 0;
    for (;;) {
      const lf = chunk.indexOf(0x0a, from);
      if (lf < 0) break;
      const piece = chunk.subarray(from, lf);
      if (carried.length === 0) yield withoutCr(piece);
      else {
        carried.push(piece);
        yield withoutCr(Buffer.concat(carried));
        carried = [];
      }
      from = lf + 1;
    }
    // A copy, so that a few bytes of the line's start do not keep the whole chunk alive.
    if (from < chunk.length) carried.push(Buffer.from(chunk.subarray(from)));
  }
  if (carried.length > 0) yield withoutCr(Buffer.concat(carried));
}

function withoutCr(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, line.length - 1) : line;
}
