/**
 * Key ranges in byte order, as both stores scan them: the end of the range of keys that start with
 * a prefix, and a scan's row-key range narrowed to the fixed prefix of its wildcard entity id.
 */
import type { ScanRequest } from './store.js';

/** The smallest key greater than every key starting with `prefix` (prefix + 1 at its last byte below FF); undefined when there is none (all FF). */
export function prefixEnd(prefix: Uint8Array): Buffer | undefined {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]!++;
      return out.subarray(0, i + 1);
    }
  }
  return undefined;
}

/**
 * The row keys a scan reads, [start, end) (undefined = open): the request's bounds, narrowed to
 * the keys that start with its row-key filter's prefix, when it has one. The range may be empty
 * (start at or after end).
 */
export function scanRange(request: Pick<ScanRequest, 'start' | 'end' | 'filter'>): { start?: Buffer; end?: Buffer } {
  let start = request.start;
  let end = request.end;
  const prefix = request.filter?.prefix;
  if (prefix && prefix.length > 0) {
    if (!start || Buffer.compare(prefix, start) > 0) start = prefix;
    const pEnd = prefixEnd(prefix);
    if (pEnd && (!end || Buffer.compare(pEnd, end) < 0)) end = pEnd;
  }
  return { start, end };
}
