/**
 * Requests node's HTTP parser refuses before any handler runs (the server's `clientError` event):
 * a malformed request line or header, bad chunked framing, Content-Length with Transfer-Encoding,
 * a head or body not received in time, a head over maxHeaderBytes. Node's own answer is a bare
 * status line; here they get the coded JSON error body every other error has (docs/errors.md),
 * written on the raw socket since there is no response object, and the connection is closed (the
 * parser cannot go on after such an error). CONNECT, which node hands over as a raw socket too, is
 * answered the same way.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { socketResponse } from '../deps/internals.js';
import { rgError, type RowgateError } from '../errors.js';
import { serialize } from './serializers.js';

/** What a clientError event carries: node's parser errors have an `HPE_*` code and llhttp's reason. */
export interface ParserError extends Error {
  readonly code?: string;
  readonly reason?: unknown;
}

export interface ClientErrorLimits {
  readonly maxHeaderBytes: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
}

/**
 * Bounds how long a socket stays after its answer was handed over, for a client that does not
 * read: the answer (~300 bytes) fits any socket buffer, so it is normally flushed at once.
 */
const FLUSH_GRACE_MS = 1000;

/** Sockets already answered: a parser in its error state may report again on more input. */
const answered = new WeakSet<Duplex>();

/** The coded error for a parser error, or undefined for a socket error (the peer is gone: no answer). */
export function clientErrorOf(err: ParserError, limits: ClientErrorLimits): RowgateError | undefined {
  const code = err.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') {
    return rgError('RG_ERR_HEADERS_TOO_LARGE', `the request line and headers exceed limits.maxHeaderBytes (${limits.maxHeaderBytes} bytes)`);
  }
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    return rgError('RG_ERR_BODY_TOO_LARGE', "the chunk extensions of the request body exceed node's limit of 16 KiB");
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return rgError(
      'RG_ERR_REQUEST_TIMEOUT',
      `the request was not received in time: its line and headers are due within limits.headersTimeoutMs (${limits.headersTimeoutMs} ms), the whole request within limits.requestTimeoutMs (${limits.requestTimeoutMs} ms)`,
    );
  }
  if (code.startsWith('HPE_')) {
    const reason = typeof err.reason === 'string' && err.reason !== '' ? err.reason : err.message;
    return rgError('RG_ERR_BAD_HTTP_REQUEST', `the request is not valid HTTP/1.1: ${reason} (${code})`);
  }
  return undefined;
}

/**
 * The whole HTTP/1.1 response of an error, head and JSON body, ending the connection; for a HEAD
 * request the head alone (its Content-Length that of the body not sent, as for any HEAD).
 */
export function rawErrorResponse(err: RowgateError, method?: string): string {
  const body = serialize.error(err.toBody());
  return (
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}\r\n` +
    `date: ${new Date().toUTCString()}\r\n` +
    'content-type: application/json\r\n' +
    `content-length: ${Buffer.byteLength(body, 'utf8')}\r\n` +
    'connection: close\r\n\r\n' +
    (method === 'HEAD' ? '' : body)
  );
}

/**
 * The method of the refused request, where it can be known: that of the request whose body was
 * being read, else the first word of the bytes node was parsing when it failed (`rawPacket`, which
 * starts with the request line when the request arrived in one read, the usual case for a fresh
 * connection or a client that does not pipeline). A HEAD client must get no body: it would read
 * one as garbage after the response.
 */
function requestMethod(err: ParserError, pending: ServerResponse | undefined): string | undefined {
  if (pending !== undefined && !pending.req.complete) return pending.req.method;
  const packet = (err as ParserError & { rawPacket?: unknown }).rawPacket;
  if (!Buffer.isBuffer(packet)) return undefined;
  return /^([A-Z]+) /.exec(packet.subarray(0, 16).toString('latin1'))?.[1];
}

/**
 * Answers a clientError with its coded JSON response, then closes the socket. Written only while
 * the socket is writable and no response on it has begun: writing into a response under way would
 * corrupt what the client reads, so then the socket is just closed (as for socket errors, where
 * the peer is gone). A response still owed to an earlier, complete request (pipelining) goes
 * first: the answer waits for it.
 */
export function answerClientError(err: ParserError, socket: Duplex, limits: ClientErrorLimits, log: Logger): void {
  // Already answered: the answer is being flushed, after which the socket is closed.
  if (answered.has(socket)) return;
  const coded = clientErrorOf(err, limits);
  if (coded === undefined) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  const settle = (): void => {
    const pending = socketResponse(socket);
    if (pending !== undefined && pending.req.complete && !socket.destroyed) {
      // Node attaches the next pipelined response, if any, before this one's 'close': checked again then.
      pending.once('close', settle);
      return;
    }
    if (!socket.writable || pending?.headersSent === true) {
      socket.destroy();
      return;
    }
    const method = requestMethod(err, pending);
    log.info({ method, status: coded.status, code: coded.code, parserError: err.code }, 'request refused by the HTTP parser');
    endWith(socket, coded, method);
  };
  settle();
}

/**
 * CONNECT (node hands its socket over raw, and without a listener drops the connection unanswered):
 * an origin server is no proxy, so it is a coded 400.
 */
export function answerConnect(socket: Duplex, log: Logger): void {
  const coded = rgError('RG_ERR_BAD_HTTP_REQUEST', 'CONNECT is not served: rowgate is an origin server, not a proxy');
  log.info({ status: coded.status, code: coded.code, method: 'CONNECT' }, 'request refused');
  endWith(socket, coded);
}

/** Writes the error's whole response and closes the socket once it is flushed (or after FLUSH_GRACE_MS). */
function endWith(socket: Duplex, coded: RowgateError, method?: string): void {
  const timer = setTimeout(() => socket.destroy(), FLUSH_GRACE_MS);
  timer.unref();
  socket.end(rawErrorResponse(coded, method), () => {
    clearTimeout(timer);
    socket.destroy();
  });
}
