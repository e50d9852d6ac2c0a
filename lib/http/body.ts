/**
 * Request bodies: content type and declared size checked before anything is read (checkBodyHead,
 * which handlers call before any store call), then the body read as it arrives, checked as UTF-8
 * and cut into its rows, each parsed by parseExactJson (json-elements.ts). Every body takes this
 * one path, whatever its size and however it is sent (Content-Length or chunked), so there is one
 * definition of a valid body; `rowgate import` parses its lines with the same parseExactJson.
 * Neither the raw text nor the parsed tree of a whole body is held: one row at a time.
 */
import type { IncomingMessage } from 'node:http';
import { rgError } from '../errors.js';
import { JsonElementSplitter } from '../model/json/json-elements.js';
import type { JsonValue } from '../model/types.js';
import { Utf8Pieces } from '../model/json/utf8-pieces.js';

/** The charsets a JSON body may declare: JSON exchanged between systems is UTF-8 (RFC 8259 8.1). */
const UTF8_LABELS = new Set(['utf-8', 'utf8']);

/**
 * The content type must be application/json, and a charset parameter, if any, UTF-8: a body
 * declared in another charset (latin1) would otherwise be decoded as UTF-8 and stored altered.
 */
export function requireJsonContent(req: IncomingMessage): void {
  const [type, ...params] = (req.headers['content-type'] ?? '').split(';');
  const mediaType = type!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw rgError(
      'RG_ERR_UNSUPPORTED_MEDIA_TYPE',
      `request body must be sent as Content-Type: application/json, got ${mediaType === '' ? 'none' : JSON.stringify(mediaType)}`,
    );
  }
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (!UTF8_LABELS.has(charset)) {
      throw rgError(
        'RG_ERR_UNSUPPORTED_MEDIA_TYPE',
        `request body must be UTF-8 JSON: charset ${JSON.stringify(charset)} is not supported (send charset=utf-8, or no charset)`,
      );
    }
  }
}

/**
 * A body is read as sent: a Content-Encoding other than identity (gzip, deflate, br) is a 415
 * naming it (RFC 9110 15.5.16), with Accept-Encoding: identity saying what would be taken. Before,
 * a gzip body was read as raw bytes and refused as "not valid UTF-8", which named the wrong fault.
 * Not decoded: the body limit bounds the bytes received, and an inflated body would need a bound
 * of its own; KijiREST's clients send plain JSON.
 */
export function requireIdentityEncoding(req: IncomingMessage): void {
  const header = req.headers['content-encoding'];
  if (header === undefined) return;
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return;
  const err = rgError(
    'RG_ERR_UNSUPPORTED_CONTENT_ENCODING',
    `request body is sent with Content-Encoding ${JSON.stringify(codings.join(', '))}: bodies are read as sent, without a content coding (send the JSON uncompressed)`,
  );
  err.headers = { 'accept-encoding': 'identity' };
  throw err;
}

/**
 * What can be judged from the request head alone: the content type and coding (415) and the
 * declared Content-Length (413). A handler calls this before any store call, so such a request
 * costs no work and its status does not depend on whether the instance or table exists. A body
 * without a declared length (chunked) is still bounded while it is read.
 */
export function checkBodyHead(req: IncomingMessage, limit: number): void {
  requireJsonContent(req);
  requireIdentityEncoding(req);
  if (declaredLength(req) > limit) throw tooLarge(limit);
}

/** The request has a body (RFC 9112 6.3): Transfer-Encoding, or a Content-Length other than 0. */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** NaN when no Content-Length is given. */
function declaredLength(req: IncomingMessage): number {
  return Number(req.headers['content-length'] ?? NaN);
}

/**
 * Yields the body's rows as they arrive: each element of a top-level array, or the body itself
 * when it is not an array. Throws RG_ERR_BODY_TOO_LARGE past `limit` bytes, RG_ERR_BAD_BODY on
 * bytes that are not UTF-8 and on malformed JSON (naming the position). The head (content type,
 * declared length) was checked by the handler before any store call: checkBodyHead.
 */
/** Where jsonBodyItems leaves the bytes of the body it has read (metrics of body bytes). */
export const BODY_BYTES = Symbol('rowgate.bodyBytes');
export type BodyCounted = { [BODY_BYTES]?: number };

/** `onBytes` is told each chunk's size as it arrives, before it is parsed; what it throws ends the read. */
export async function* jsonBodyItems(req: IncomingMessage, limit: number, onBytes?: (bytes: number) => void): AsyncGenerator<JsonValue> {
  const text = new Utf8Pieces('request body');
  const rows = new JsonElementSplitter('request body');
  let size = 0;
  // for...of rather than yield*, which wraps each array in an async iterator (~4 us a body).
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    (req as BodyCounted)[BODY_BYTES] = size;
    if (size > limit) throw tooLarge(limit);
    onBytes?.(chunk.length);
    for (const row of rows.push(text.decode(chunk))) yield row;
  }
  for (const row of rows.push(text.end())) yield row;
  for (const row of rows.end()) yield row;
}

function tooLarge(limit: number) {
  return rgError('RG_ERR_BODY_TOO_LARGE', `request body exceeds the limit of ${limit} bytes`);
}
