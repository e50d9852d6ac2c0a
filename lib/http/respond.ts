/** Writing complete (non-streamed) responses: JSON bodies and coded errors. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRowgateError, rgError, type RowgateError } from '../errors.js';
import { serialize } from './serializers.js';

export function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers });
  res.end(bytes);
}

/** Turns anything thrown into a coded error; an uncoded one is a bug and becomes RG_ERR_INTERNAL. */
export function asRowgateError(e: unknown): RowgateError {
  if (isRowgateError(e)) return e;
  return rgError('RG_ERR_INTERNAL', 'internal error (logged by the server)', e);
}

export function sendError(req: IncomingMessage, res: ServerResponse, err: RowgateError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    // Mid-stream: the only honest signal left is a truncated response (DESIGN.md 4, stream policy).
    res.destroy(err);
    return;
  }
  // A body we stopped reading cannot be skipped safely on a kept-alive connection.
  if (!req.complete) headers = { ...headers, connection: 'close' };
  sendJson(res, err.status, serialize.error(err.toBody()), headers);
}
