/**
 * Response compression (config `compression: true`): gzip or br for clients that accept it
 * (Accept-Encoding, q-values honoured), streamed and flushed per chunk so a scan's rows reach
 * the client as they are produced, never buffered whole. Complete JSON bodies (respond.ts
 * sendJson) go through the same compressor from about 1 KiB up.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, createBrotliCompress, createGzip, type BrotliCompress, type Gzip } from 'node:zlib';

export type Encoding = 'br' | 'gzip';

/** Levels picked for throughput: a scan must not become compression-bound. */
const GZIP_LEVEL = 4;
const BROTLI_QUALITY = 4;

/** The encoding to answer with, or undefined for identity. Ties prefer br. */
export function negotiateEncoding(req: IncomingMessage, enabled: boolean): Encoding | undefined {
  if (!enabled) return undefined;
  const header = req.headers['accept-encoding'];
  if (typeof header !== 'string' || header === '') return undefined;
  let best: Encoding | undefined;
  let bestQ = 0;
  let star = -1;
  const seen = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!name || !Number.isFinite(q)) continue;
    if (name === '*') star = q;
    else seen.set(name, q);
  }
  for (const enc of ['br', 'gzip'] as const) {
    const q = seen.get(enc) ?? (star >= 0 && !seen.has(enc) ? star : 0);
    if (q > bestQ) {
      best = enc;
      bestQ = q;
    }
  }
  return best;
}

/** A compressor that flushes after every write (per chunk). */
export function compressor(encoding: Encoding): Gzip | BrotliCompress {
  if (encoding === 'gzip') return createGzip({ level: GZIP_LEVEL, flush: constants.Z_SYNC_FLUSH });
  return createBrotliCompress({
    flush: constants.BROTLI_OPERATION_FLUSH,
    params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY },
  });
}

/**
 * Headers of a response that compression applies to. While compression is on (`enabled`), every
 * such response carries `Vary: Accept-Encoding`, compressed or not, so a cache keeps the variants
 * apart; it is added to a Vary the response already has (CORS sets `Vary: Origin`). A compressed
 * one also names its Content-Encoding (and has no Content-Length: it is unknown up front).
 */
export function encodingHeaders(encoding: Encoding | undefined, res: ServerResponse, enabled: boolean): Record<string, string> {
  if (!enabled && encoding === undefined) return {};
  const prior = res.getHeader('vary');
  const vary = prior ? `${String(prior)}, Accept-Encoding` : 'Accept-Encoding';
  return encoding === undefined ? { vary } : { 'content-encoding': encoding, vary };
}
