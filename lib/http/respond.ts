/** Writing complete (non-streamed) responses: JSON bodies and coded errors. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, Readable } from 'node:stream';
import { isRowgateError, rgError, type RowgateError } from '../errors.js';
import { hasBody } from './body.js';
import { compressor, encodingHeaders, negotiateEncoding } from './compression.js';
import { serialize } from './serializers.js';

/** What a reply needs to know of the configuration (an AppContext is one). */
export interface ReplyContext {
  readonly config: { readonly compression: boolean };
}

/**
 * Bodies smaller than this go out uncompressed: below ~1 KiB the response fits one TCP segment
 * either way, gzip/br framing eats a good part of the saving, and a compressor per response (a
 * zlib or brotli context of hundreds of KiB) costs more than the few hundred bytes it would save.
 */
export const COMPRESS_MIN_BYTES = 1024;

const NO_HEADERS: Record<string, string> = Object.freeze({});

/**
 * Sends a complete JSON body. With `compression: true` and a client that accepts gzip or br, a
 * body of COMPRESS_MIN_BYTES or more is compressed (no Content-Length then: the compressed length
 * is not known up front, the response is chunked); every response carries `Vary: Accept-Encoding`
 * while compression is on, since the same resource may be answered either way.
 */
export function sendJson(
  ctx: ReplyContext,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = NO_HEADERS,
): void {
  const length = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  const enabled = ctx.config.compression;
  const encoding = length >= COMPRESS_MIN_BYTES ? negotiateEncoding(req, enabled) : undefined;
  if (encoding !== undefined) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers, ...encodingHeaders(encoding, res, enabled) });
    const z = compressor(encoding);
    pipeline(z, res, (err) => {
      if (err && !res.destroyed) res.destroy(err);
    });
    if (typeof body === 'string') z.end(body, 'utf8');
    else z.end(body);
    return;
  }
  // A string body goes out in one write together with the headers (a Buffer body is a writev of two).
  // The common answer (no extra headers, compression off) skips building the head twice through spreads.
  const head =
    headers === NO_HEADERS && !enabled
      ? { 'content-type': 'application/json', 'content-length': String(length) }
      : { 'content-type': 'application/json', 'content-length': String(length), ...headers, ...encodingHeaders(undefined, res, enabled) };
  res.writeHead(status, head);
  if (typeof body === 'string') res.end(body, 'utf8');
  else if (body.length <= ONE_WRITE_MAX_BYTES) res.end(body.toString('latin1'), 'latin1');
  else res.end(body);
}

/**
 * A Buffer body up to this size goes out as Latin-1 text: node writes a text body with its head
 * in one write (a Buffer body is a writev of head and body, through more of node's stream code),
 * and Latin-1 gives back each byte as it was, UTF-8 or not. Alternating the two on point reads
 * (~400-byte bodies): 0.6 us less server CPU a request at 30,000 req/s, 1-9% more req/s at
 * saturation (three of four rounds). Above a few KiB the copy into a string costs more than the
 * write it saves.
 */
const ONE_WRITE_MAX_BYTES = 4096;

/**
 * Sends a JSON body produced in pieces, written as the socket takes them, so a large answer is
 * never one string: `length` is its byte length, `pieces` gives its text. It goes out as sendJson
 * would send the joined text: compressed for a client that accepts it (chunked then), otherwise
 * with its Content-Length.
 */
export function sendJsonPieces(ctx: ReplyContext, req: IncomingMessage, res: ServerResponse, status: number, length: number, pieces: Iterable<string>): void {
  const enabled = ctx.config.compression;
  const encoding = negotiateEncoding(req, enabled);
  const done = (err: Error | null | undefined): void => {
    if (err && !res.destroyed) res.destroy(err);
  };
  const body = Readable.from(pieces, { objectMode: false });
  if (encoding !== undefined) {
    res.writeHead(status, { 'content-type': 'application/json', ...encodingHeaders(encoding, res, enabled) });
    pipeline(body, compressor(encoding), res, done);
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(length), ...encodingHeaders(undefined, res, enabled) });
  pipeline(body, res, done);
}

/** Turns anything thrown into a coded error; an uncoded one is a bug and becomes RG_ERR_INTERNAL. */
export function asRowgateError(e: unknown): RowgateError {
  if (isRowgateError(e)) return e;
  return rgError('RG_ERR_INTERNAL', 'internal error (logged by the server)', e);
}

/**
 * The headers an error response carries besides its body: those the raise site attached (e.g.
 * WWW-Authenticate) and `Retry-After` for the codes the registry marks retryable (every 503).
 */
export function errorHeaders(err: RowgateError): Record<string, string> {
  const headers: Record<string, string> = { ...err.headers };
  if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
  return headers;
}

export function sendError(ctx: ReplyContext, req: IncomingMessage, res: ServerResponse, err: RowgateError): void {
  if (res.headersSent) {
    // Mid-stream: the only honest signal left is a truncated response (docs/interface.md, "The row stream").
    res.destroy(err);
    return;
  }
  const headers = errorHeaders(err);
  // A body we stopped reading cannot be skipped safely on a kept-alive connection. Asking only
  // `req.complete` is not enough: node sets it after the request event, so an error answered in
  // that event (a bad parameter, a point read's bad id) found every GET incomplete and closed it.
  if (!req.complete && hasBody(req)) headers.connection = 'close';
  sendJson(ctx, req, res, err.status, serialize.error(err.toBody()), headers);
}
