/**
 * The gateway's ServerResponse: it sends the request's id (X-Request-Id) with whatever head the
 * response writes, explicit or implicit (node writes an implicit head through writeHead too).
 *
 * Why not `res.setHeader('x-request-id', id)` when the request arrives: one header set that way
 * sends every later writeHead down node's slow path, where each of its headers goes through
 * setHeader again (validated, lower-cased, stored) before the head is built. Given with the
 * others, the id costs one more property on an object a handler builds anyway (a point read's
 * writeHead took 0.6 us of its ~22 us in `perf`).
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { takeRelease } from '../rows/lent-bytes.js';

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];
type WriteCallback = (error: Error | null | undefined) => void;

export const REQUEST_ID_HEADER = 'x-request-id';

export class GatewayResponse extends ServerResponse<IncomingMessage> {
  /**
   * A scan chunk whose memory the store wants back (lib/rows/lent-bytes.ts) is given back by the
   * write's callback: once it runs, the socket holds nothing of the chunk (a destroyed socket never
   * calls it, and the chunk is then left to the garbage collector).
   */
  override write(chunk: unknown, encodingOrCallback?: unknown, callback?: unknown): boolean {
    const release = chunk instanceof Uint8Array ? takeRelease(chunk) : undefined;
    if (release === undefined) return super.write(chunk, encodingOrCallback as BufferEncoding, callback as WriteCallback);
    const encoding = typeof encodingOrCallback === 'function' ? undefined : (encodingOrCallback as BufferEncoding | undefined);
    const done = (typeof encodingOrCallback === 'function' ? encodingOrCallback : callback) as WriteCallback | undefined;
    return super.write(chunk, encoding as BufferEncoding, (err) => {
      release();
      done?.(err);
    });
  }

  /** Sent as X-Request-Id with the head; set by the server when the request arrives. */
  requestId: string | undefined = undefined;

  override writeHead(statusCode: number, reasonOrHeaders?: string | Headers, headers?: Headers): this {
    // Kept after use: a writeHead that node refuses (an invalid header value) is followed by the
    // error response's, which must carry the id too; a second head once one is sent throws in node.
    const id = this.requestId;
    if (id === undefined) return super.writeHead(statusCode, reasonOrHeaders as string, headers);
    if (typeof reasonOrHeaders === 'string') return super.writeHead(statusCode, reasonOrHeaders, withRequestId(headers, id));
    return super.writeHead(statusCode, withRequestId(reasonOrHeaders, id));
  }
}

/** `headers` with the request id first (node's flat `[name, value, ...]` and `[[name, value]]` array forms kept). */
function withRequestId(headers: Headers | undefined, id: string): Headers {
  if (headers === undefined) return { [REQUEST_ID_HEADER]: id };
  if (!Array.isArray(headers)) return { [REQUEST_ID_HEADER]: id, ...headers };
  const nested = headers.length > 0 && Array.isArray(headers[0]);
  return nested ? ([[REQUEST_ID_HEADER, id], ...headers] as unknown as OutgoingHttpHeader[]) : [REQUEST_ID_HEADER, id, ...headers];
}
