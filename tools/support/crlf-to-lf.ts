/**
 * A gateway's row stream (every row ended by CR LF) as NDJSON (ended by LF), for `rowgate export
 * --url --format ndjson`: the gateway's own framing is what it sent, so the client changes it as
 * it writes. JSON escapes CR inside strings, so a raw CR byte is only ever a terminator's.
 */
import { Transform, type TransformCallback } from 'node:stream';

export class CrLfToLf extends Transform {
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (chunk.indexOf(0x0d) < 0) {
      done(null, chunk);
      return;
    }
    const out = Buffer.allocUnsafe(chunk.length);
    let n = 0;
    let from = 0;
    for (let at = chunk.indexOf(0x0d); at >= 0; at = chunk.indexOf(0x0d, from)) {
      n += chunk.copy(out, n, from, at);
      from = at + 1;
    }
    n += chunk.copy(out, n, from);
    done(null, out.subarray(0, n));
  }
}
