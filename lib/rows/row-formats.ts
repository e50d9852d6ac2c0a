/**
 * The formats rows are served and exported in: `json` (the row stream: compact revision 3 JSON
 * documents, each followed by CR LF; KijiREST's format and the default), `ndjson` (the same
 * documents, each followed by LF) and `avro` (an Avro object container file, schema derived from
 * the layout: lib/model/avro/avro-export.ts). GET rows picks one from the Accept header; clients that
 * send application/json, anything matching it, or no Accept get exactly the json bytes.
 *
 * json and ndjson differ only in the framing's terminator (terminatorOf), which the scan's
 * framing stage writes (or the LMDB fused loop, compiled in). avro is encoded from the filtered
 * rows' cells by its own stages (stages/avro.ts), no row document rendered.
 */
import { rgError } from '../errors.js';
import { ROW_TERMINATOR } from './row-format.js';
import type { RowTerminator } from './row-document.js';

export type RowFormat = 'json' | 'ndjson' | 'avro';
export const ROW_FORMATS: readonly RowFormat[] = ['json', 'ndjson', 'avro'];

export const CONTENT_TYPE: Record<RowFormat, string> = {
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  avro: 'application/avro',
};

// A Map, not an object literal: an Accept of `constructor` or `__proto__` must not find Object's members.
const BY_MEDIA = new Map<string, RowFormat>([
  ['application/json', 'json'],
  ['application/*', 'json'],
  ['*/*', 'json'],
  ['application/x-ndjson', 'ndjson'],
  ['application/avro', 'avro'],
]);

/**
 * The format an Accept header asks for: the acceptable media range with the highest q (the first
 * listed among equals); json when there is no header. RG_ERR_NOT_ACCEPTABLE (406) when none is
 * served.
 */
export function negotiateRowFormat(accept: string | undefined): RowFormat {
  if (accept === undefined || accept.trim() === '') return 'json';
  // One media range without parameters (`*/*`, `application/json`: what clients send) needs no parsing.
  const whole = BY_MEDIA.get(accept);
  if (whole !== undefined) return whole;
  let best: RowFormat | undefined;
  let bestQ = 0;
  for (const range of accept.split(',')) {
    const [media = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const format = BY_MEDIA.get(media);
    if (format === undefined) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (Number.isFinite(q) && q > bestQ) {
      best = format;
      bestQ = q;
    }
  }
  if (best === undefined)
    throw rgError(
      'RG_ERR_NOT_ACCEPTABLE',
      `rows are served as application/json, application/x-ndjson or application/avro; Accept: ${accept.slice(0, 200)} names none of them`,
    );
  return best;
}

/** What ends each row of `format`'s stream: LF for NDJSON, CR LF for the row stream. */
export function terminatorOf(format: RowFormat): RowTerminator {
  return format === 'ndjson' ? '\n' : ROW_TERMINATOR;
}
