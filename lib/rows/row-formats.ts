/**
 * The formats rows are served and exported in: `json` (the row stream: compact revision 3 JSON
 * documents, each followed by CR LF; KijiREST's format and the default), `ndjson` (the same
 * documents, each followed by LF), `avro` (an Avro object container file, schema derived from
 * the layout: lib/model/avro/avro-export.ts) and `arrow` (an Arrow IPC stream of typed columns:
 * lib/rows/formats/arrow-columns.ts, stages/arrow.ts) and `parquet` (a Parquet file of the same typed
 * columns, each union a struct of its branches: stages/parquet.ts). GET rows picks one from the Accept header; clients that
 * send application/json, anything matching it, or no Accept get exactly the json bytes.
 *
 * json and ndjson differ only in the framing's terminator (terminatorOf), which the scan's
 * framing stage writes (or the LMDB fused loop, compiled in). avro, arrow and parquet are encoded from the
 * filtered rows' cells by their own stages (stages/avro.ts, stages/arrow.ts), no row document rendered.
 */
import { rgError } from '../errors.js';
import { ROW_TERMINATOR } from './row-format.js';
import type { RowTerminator } from './row-document.js';

export type RowFormat = 'json' | 'ndjson' | 'avro' | 'arrow' | 'parquet';
/** The formats `rowgate export` writes (arrow is served to GET rows only). */
export const ROW_FORMATS: readonly RowFormat[] = ['json', 'ndjson', 'avro', 'parquet'];

export const CONTENT_TYPE: Record<RowFormat, string> = {
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  avro: 'application/avro',
  arrow: 'application/vnd.apache.arrow.stream',
  parquet: 'application/vnd.apache.parquet',
};

// A Map, not an object literal: an Accept of `constructor` or `__proto__` must not find Object's members.
const BY_MEDIA = new Map<string, RowFormat>([
  ['application/json', 'json'],
  ['application/*', 'json'],
  ['*/*', 'json'],
  ['application/x-ndjson', 'ndjson'],
  ['application/avro', 'avro'],
  ['application/vnd.apache.arrow.stream', 'arrow'],
  ['application/vnd.apache.parquet', 'parquet'],
]);

/** A media range as RFC 9110 writes one: `type/subtype` of token characters. */
const MEDIA_RANGE = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** A weight: 0 to 1 with at most three decimals. */
const WEIGHT = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The format an Accept header asks for: the acceptable media range with the highest q (the first
 * listed among equals); json when there is no header. A range that cannot be parsed (`,,,`, no
 * `/`, `q=abc`, a q above 1) is left out, and a header of nothing but such ranges counts as absent
 * (json), as most servers take it. RG_ERR_NOT_ACCEPTABLE (406) when the ranges that parse name no
 * format served.
 */
export function negotiateRowFormat(accept: string | undefined): RowFormat {
  if (accept === undefined || accept.trim() === '') return 'json';
  // One media range without parameters (`*/*`, `application/json`: what clients send) needs no parsing.
  const whole = BY_MEDIA.get(accept);
  if (whole !== undefined) return whole;
  let best: RowFormat | undefined;
  let bestQ = 0;
  let parsed = 0;
  for (const range of accept.split(',')) {
    const [media = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    if (!MEDIA_RANGE.test(media)) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    if (qParam !== undefined && !WEIGHT.test(qParam.slice(2))) continue;
    parsed++;
    const format = BY_MEDIA.get(media);
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (format !== undefined && q > bestQ) {
      best = format;
      bestQ = q;
    }
  }
  if (parsed === 0) return 'json';
  if (best === undefined)
    throw rgError(
      'RG_ERR_NOT_ACCEPTABLE',
      `rows are served as application/json, application/x-ndjson, application/avro, application/vnd.apache.arrow.stream or application/vnd.apache.parquet; Accept: ${accept.slice(0, 200)} names none of them`,
    );
  return best;
}

/** What ends each row of `format`'s stream: LF for NDJSON, CR LF for the row stream. */
export function terminatorOf(format: RowFormat): RowTerminator {
  return format === 'ndjson' ? '\n' : ROW_TERMINATOR;
}
