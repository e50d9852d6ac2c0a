/**
 * The access log: one pino-shaped `request` line a request, built from a template instead of
 * through pino's serializer (pino cost about 2.9 us of CPU a line, the template 0.13 us, against
 * about 20 us of CPU for a whole point read). The line is the one pino would write for
 * `log.info({reqId, method, route, status, ms, rows, aborted, client, token, instance, table},
 * 'request')`: pino's level, time and bindings first, `msg` last. It goes to the logger's own
 * destination, so its order with pino's lines holds; a LogSink (logging/log-sink.ts) gathers request
 * lines into large writes.
 *
 * Request ids: a client's `X-Request-Id` is kept when it is 1 to 128 characters of letters,
 * digits and `._:/+=@-` (what trace and UUID forms use, nothing that needs escaping); otherwise
 * the gateway makes one (a random UUID). Either way it is echoed in the response's X-Request-Id.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { ByteWriter } from '../bytes/byte-writer.js';
import { pinoBindings, pinoDestination, pinoTime } from '../deps/internals.js';
import { LogSink } from '../logging/log-sink.js';

export interface RequestLine {
  readonly reqId: string;
  readonly method: string;
  /** The route template, or `-` when no route matched. */
  readonly route: string;
  readonly status: number;
  readonly ms: number;
  readonly rows: number;
  readonly aborted: boolean;
  readonly client: string | undefined;
  /** The bearer token's name, when tokens are configured and the request carried a valid one. */
  readonly token: string | undefined;
  readonly instance: string | undefined;
  readonly table: string | undefined;
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:/+=@-]{1,128}$/;
/** Printable ASCII but `"` and `\`: written between quotes as it is. */
const PLAIN_TEXT = /^[ !#-[\]-~]*$/;

/**
 * The request's id: the client's X-Request-Id when sane, else a new one. Node's randomUUID: ids
 * written as bytes saved 65 ns of a ~14 us point read (0.5%), under the 3% a benchmark scenario
 * must show for code of its own (issue #27).
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** A JSON string literal; text that needs no escaping (nearly all) is not run through JSON.stringify. */
function quoted(text: string): string {
  return PLAIN_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}

type StreamLike = { write(line: string): unknown };

/** The UTF-8 bytes of a piece of the line, made once: it repeats line after line. */
const bytesOf = (text: string): Buffer => Buffer.from(text, 'utf8');

/** The last tail written: the next request on a kept-alive connection to the same table shares it. */
interface Tail {
  readonly client: string | undefined;
  readonly token: string | undefined;
  readonly instance: string | undefined;
  readonly table: string | undefined;
  readonly bytes: Buffer;
}

const MS = bytesOf(',"ms":');
const ROWS = bytesOf(',"rows":');
const ABORTED = bytesOf(',"aborted":true');
const NOT_ABORTED = bytesOf(',"aborted":false');
const QUOTE = bytesOf('"');

export class RequestLog {
  private readonly stream: StreamLike;
  private readonly sink: LogSink | undefined;
  /** Where a line for a destination other than a LogSink is encoded before it is written as text. */
  private readonly scratch = new ByteWriter(1024);
  private readonly time: () => string;
  private readonly bindings: string;
  /**
   * The line is assembled from pieces made once where they repeat: per route its method and
   * route fields (for the last method seen on it), the head per millisecond, the tail (client,
   * token, instance, table) while it stays the same. The pieces are copied as bytes and the
   * numbers written as digits, with no string built: a point read's line took ~1.2 us of its
   * ~22 us in `perf` built as one string (~20 strings made, five quoted, then flattened and
   * encoded), and ~2 us of CPU a request separated `info` from `warn`.
   */
  private readonly routes = new Map<string, { method: string; bytes: Buffer }>();
  private headMs = -1;
  private head = bytesOf('');
  private tail: Tail = { client: undefined, token: undefined, instance: undefined, table: undefined, bytes: bytesOf(`,"msg":"request"}\n`) };

  constructor(private readonly log: Logger) {
    this.stream = pinoDestination(log);
    this.sink = this.stream instanceof LogSink ? this.stream : undefined;
    this.time = pinoTime(log) ?? (() => `,"time":${Date.now()}`);
    this.bindings = pinoBindings(log);
  }

  /** False when the level hides info lines (it can change while running). */
  get enabled(): boolean {
    return this.log.isLevelEnabled('info');
  }

  /** Writes the request's line: encoded straight into a LogSink's buffer, or for another destination encoded apart and written as text. */
  write(l: RequestLine): void {
    if (this.sink === undefined) {
      this.scratch.pos = 0;
      this.encode(l, this.scratch);
      this.stream.write(this.scratch.buf.toString('utf8', 0, this.scratch.pos));
      return;
    }
    const out = this.sink.lineWriter();
    if (out === undefined) return;
    this.encode(l, out);
    this.sink.lineWritten();
  }

  private encode(l: RequestLine, out: ByteWriter): void {
    const now = Date.now();
    // pino's time functions (epoch, unix, ISO) all derive from Date.now(): one head per millisecond.
    if (now !== this.headMs) {
      this.headMs = now;
      this.head = bytesOf(`{"level":30${this.time()}${this.bindings},"reqId":`);
    }
    let route = this.routes.get(l.route);
    if (route === undefined || route.method !== l.method) {
      route = { method: l.method, bytes: bytesOf(`,"method":${quoted(l.method)},"route":${quoted(l.route)},"status":`) };
      this.routes.set(l.route, route);
    }
    let tail = this.tail;
    if (tail.client !== l.client || tail.token !== l.token || tail.instance !== l.instance || tail.table !== l.table) {
      const text =
        (l.client === undefined ? '' : `,"client":${quoted(l.client)}`) +
        (l.token === undefined ? '' : `,"token":${quoted(l.token)}`) +
        (l.instance === undefined ? '' : `,"instance":${quoted(l.instance)}`) +
        (l.table === undefined ? '' : `,"table":${quoted(l.table)}`) +
        `,"msg":"request"}\n`;
      tail = this.tail = { client: l.client, token: l.token, instance: l.instance, table: l.table, bytes: bytesOf(text) };
    }
    out.bytes(this.head);
    if (PLAIN_TEXT.test(l.reqId)) {
      out.bytes(QUOTE);
      out.shortAscii(l.reqId);
      out.bytes(QUOTE);
    } else out.text(JSON.stringify(l.reqId));
    out.bytes(route.bytes);
    writeNumber(out, l.status);
    out.bytes(MS);
    writeNumber(out, l.ms);
    out.bytes(ROWS);
    writeNumber(out, l.rows);
    out.bytes(l.aborted ? ABORTED : NOT_ABORTED);
    out.bytes(tail.bytes);
  }
}

/**
 * A number as JSON.stringify writes it: digits for a non-negative safe integer, and for a
 * duration in hundredths of a millisecond (`ms`, at most two decimals) its integer and
 * fraction, with the fraction's trailing zero dropped; anything else through String() (null when not finite).
 */
export function writeNumber(out: ByteWriter, n: number): void {
  if (Number.isSafeInteger(n) && n >= 0) {
    out.decimal(n);
    return;
  }
  const hundredths = Math.round(n * 100);
  if (n > 0 && hundredths < Number.MAX_SAFE_INTEGER && hundredths / 100 === n) {
    const whole = Math.floor(hundredths / 100);
    const fraction = hundredths - whole * 100;
    const tenths = Math.floor(fraction / 10);
    const last = fraction - tenths * 10;
    out.decimal(whole);
    out.room(3);
    out.buf[out.pos++] = 0x2e; // .
    out.buf[out.pos++] = 0x30 + tenths;
    if (last !== 0) out.buf[out.pos++] = 0x30 + last;
    return;
  }
  out.shortAscii(Number.isFinite(n) ? String(n) : 'null');
}
