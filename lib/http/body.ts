/**
 * Request bodies: content type and declared size checked before anything is read (checkBodyHead,
 * which handlers call before any store call). Small bodies are parsed whole (JSON.parse is ~6x
 * faster than a streaming parser, platform-notes.md 4d); large ones go through stream-json token
 * by token, one top-level array element at a time, so the raw text and the whole parsed tree are
 * never in memory at once.
 */
import type { IncomingMessage } from 'node:http';
import streamJson from 'stream-json';
import { rgError } from '../errors.js';
import { MAX_JSON_DEPTH, parseExactJson } from '../model/exact-json.js';
import type { JsonValue } from '../model/types.js';

/** Bodies up to this size are buffered and parsed at once; 1 MiB is ~3,000 typical rows. */
const WHOLE_PARSE_BYTES = 1024 * 1024;

export function requireJsonContent(req: IncomingMessage): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw rgError('RG_ERR_UNSUPPORTED_MEDIA_TYPE', `request body must be sent as Content-Type: application/json, got ${type === '' ? 'none' : JSON.stringify(type)}`);
  }
}

/**
 * What can be judged from the request head alone: the content type (415) and the declared
 * Content-Length (413). A handler calls this before any store call, so such a request costs no
 * work and its status does not depend on whether the instance or table exists. A body without a
 * declared length (chunked) is still bounded while it is read.
 */
export function checkBodyHead(req: IncomingMessage, limit: number): void {
  requireJsonContent(req);
  if (declaredLength(req) > limit) throw tooLarge(limit);
}

/** NaN when no Content-Length is given. */
function declaredLength(req: IncomingMessage): number {
  return Number(req.headers['content-length'] ?? NaN);
}

/**
 * Yields the body's rows: each element of a top-level array, or the body itself when it is one
 * object. Throws RG_ERR_BODY_TOO_LARGE past `limit` bytes and RG_ERR_BAD_BODY on malformed JSON.
 */
export async function* jsonBodyItems(req: IncomingMessage, limit: number): AsyncGenerator<JsonValue> {
  // The head (content type, declared length) was checked by the handler before any store call: checkBodyHead.
  const declared = declaredLength(req);
  if (declared <= WHOLE_PARSE_BYTES) {
    const text = await readWhole(req, limit);
    if (text.trim() === '') throw rgError('RG_ERR_BAD_BODY', 'request body is empty: expected a row object or an array of rows');
    const value = parseExactJson(text, 'request body');
    if (Array.isArray(value)) yield* value;
    else yield value;
    return;
  }
  yield* streamItems(req, limit);
}

function tooLarge(limit: number) {
  return rgError('RG_ERR_BODY_TOO_LARGE', `request body exceeds the limit of ${limit} bytes`);
}

async function readWhole(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  const buf = Buffer.concat(chunks, size);
  const text = buf.toString('utf8');
  // U+FFFD from a replaced invalid sequence would silently change the data: reject instead.
  if (text.includes('\ufffd') && !Buffer.from(text, 'utf8').equals(buf)) {
    throw rgError('RG_ERR_BAD_BODY', 'request body is not valid UTF-8');
  }
  return text;
}

interface Token {
  name: string;
  value?: string;
}

/** Builds values from stream-json tokens; integers beyond 2^53 stay exact as bigint. */
class Assembler {
  private readonly stack: (JsonValue[] | { [k: string]: JsonValue })[] = [];
  private readonly keys: (string | undefined)[] = [];
  /** Set when a top-level array element (or the top-level value) is complete. */
  done: JsonValue[] = [];
  topIsArray: boolean | undefined;

  consume(token: Token): void {
    switch (token.name) {
      case 'startObject': return this.open({});
      case 'startArray':
        if (this.topIsArray === undefined && this.stack.length === 0) {
          this.topIsArray = true;
          this.stack.push([]);
          this.keys.push(undefined);
          return;
        }
        return this.open([]);
      case 'endObject':
      case 'endArray': return this.close();
      case 'keyValue': this.keys[this.keys.length - 1] = token.value; return;
      case 'stringValue': return this.add(token.value!);
      case 'numberValue': return this.add(numberOf(token.value!));
      case 'nullValue': return this.add(null);
      case 'trueValue': return this.add(true);
      case 'falseValue': return this.add(false);
      default: return; // partial tokens are not emitted with packing on
    }
  }

  private open(container: JsonValue[] | { [k: string]: JsonValue }): void {
    if (this.topIsArray === undefined) this.topIsArray = false;
    if (this.stack.length >= MAX_JSON_DEPTH) throw rgError('RG_ERR_BAD_BODY', `request body nests deeper than ${MAX_JSON_DEPTH} levels`);
    this.stack.push(container);
    this.keys.push(undefined);
  }

  private close(): void {
    const value = this.stack.pop()!;
    this.keys.pop();
    if (this.stack.length === 0) {
      if (!this.topIsArray) this.done.push(value);
      return;
    }
    this.add(value);
  }

  private add(value: JsonValue): void {
    if (this.stack.length === 0) {
      this.topIsArray = false;
      this.done.push(value);
      return;
    }
    const top = this.stack[this.stack.length - 1]!;
    if (Array.isArray(top)) {
      if (this.topIsArray && this.stack.length === 1) this.done.push(value);
      else top.push(value);
    } else {
      top[this.keys[this.keys.length - 1]!] = value;
    }
  }
}

function numberOf(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}

async function* streamItems(req: IncomingMessage, limit: number): AsyncGenerator<JsonValue> {
  const tokens = streamJson.parser({ packKeys: true, packStrings: true, packNumbers: true, streamKeys: false, streamStrings: false, streamNumbers: false });
  const assembler = new Assembler();
  let size = 0;
  let failure: unknown;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit && failure === undefined) {
      failure = tooLarge(limit);
      tokens.destroy();
    }
  });
  req.on('error', (e) => tokens.destroy(e));
  req.pipe(tokens);
  try {
    for await (const token of tokens as AsyncIterable<Token>) {
      assembler.consume(token);
      if (assembler.done.length > 0) {
        const ready = assembler.done;
        assembler.done = [];
        yield* ready;
      }
    }
  } catch (e) {
    if (failure) throw failure;
    if ((e as { code?: string }).code?.startsWith('RG_ERR_')) throw e;
    throw rgError('RG_ERR_BAD_BODY', `request body is not valid JSON: ${(e as Error).message}`);
  } finally {
    req.unpipe(tokens);
    tokens.destroy();
  }
  if (failure) throw failure;
}
