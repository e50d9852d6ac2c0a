/**
 * The rows of one key range read from a gateway (GET rows, revision 3, limit=-1 or a count), as
 * chunks of whole rows (each CR LF framed, as GET sends them). A connection that fails or drops
 * mid-range is retried from the row after the last whole row received (bounded retries, with
 * backoff), so the range's rows come out exactly once, in order, whatever the network does.
 */
import { countDocumentCells } from './document-cells.js';
import { ROWS_TRAILER } from '../../lib/http/scan-trailers.js';
import { lastRowOf, ROW_TERMINATOR, rowKeyOfDocument } from '../../lib/rows/row-format.js';
import type { TableLayout } from '../../lib/model/types.js';
import type { ChunkSource } from '../../lib/rows/row-stream.js';
import type { RenderedChunk } from '../../lib/store/store.js';
import { backoffMs, type Gateway, MAX_RETRIES, RemoteError, type RetryOptions, waitToRetry } from './remote.js';

/** Attempts in all, however much each one got through (MAX_RETRIES counts failures in a row: it starts again once rows arrive). */
const MAX_ATTEMPTS = 100;

export interface RemoteRange {
  readonly start?: Buffer;
  readonly end?: Buffer;
  /** Rows at most; -1 = all. */
  readonly limit: number;
  /** Other GET rows parameters (cols, versions, timerange; eid for one row or a wildcard, with no range). */
  readonly params: Readonly<Record<string, string>>;
}

export type RemoteRowsOptions = RetryOptions;

/** The GET rows parameters of the read options given (the gateway's defaults for those not given). */
export function readParams(flags: { readonly cols?: string; readonly versions?: string; readonly timerange?: string }): Record<string, string> {
  const params: Record<string, string> = {};
  if (flags.cols !== undefined) params.cols = flags.cols;
  if (flags.versions !== undefined) params.versions = flags.versions;
  if (flags.timerange !== undefined) params.timerange = flags.timerange;
  return params;
}

/** The smallest row key after `key`: where a range continues after a row. */
export function keyAfter(key: Buffer): Buffer {
  return Buffer.concat([key, Buffer.alloc(1)]);
}

function countRows(chunk: Buffer): number {
  let rows = 0;
  for (let i = chunk.indexOf(ROW_TERMINATOR); i >= 0; i = chunk.indexOf(ROW_TERMINATOR, i + 2)) rows++;
  return rows;
}

export function rangeQuery(range: { start?: Buffer; end?: Buffer; limit: number; params: Readonly<Record<string, string>> }): string {
  const q = new URLSearchParams({ ...range.params, limit: String(range.limit) });
  if (range.start !== undefined) q.set('start_eid', `rowkey_hex=${range.start.toString('hex')}`);
  if (range.end !== undefined) q.set('end_eid', `rowkey_hex=${range.end.toString('hex')}`);
  return q.toString();
}

export function remoteRows(gateway: Gateway, tablePath: string, layout: TableLayout, range: RemoteRange, options: RemoteRowsOptions = {}): ChunkSource {
  const chunks = rangeChunks(gateway, tablePath, layout, range, options);
  return {
    next: async () => {
      const r = await chunks.next();
      return r.done ? undefined : r.value;
    },
    close: async () => {
      await chunks.return(undefined);
    },
  };
}

async function* rangeChunks(
  gateway: Gateway,
  tablePath: string,
  layout: TableLayout,
  range: RemoteRange,
  options: RemoteRowsOptions,
): AsyncGenerator<RenderedChunk, void> {
  let start = range.start;
  let remaining = range.limit;
  let failures = 0;
  for (let attempt = 1; ; attempt++) {
    let last: Buffer | undefined;
    let got = 0;
    const res = await gateway
      .open(`${tablePath}/rows?${rangeQuery({ ...range, start, limit: remaining })}`, {}, options.signal)
      .catch((e: unknown) => e as Error);
    try {
      if (res instanceof Error) throw res;
      let carry: Buffer | undefined;
      try {
        for await (const data of res) {
          const buf: Buffer = carry === undefined ? (data as Buffer) : Buffer.concat([carry, data as Buffer]);
          const cut = buf.lastIndexOf(ROW_TERMINATOR);
          if (cut < 0) {
            carry = buf;
            continue;
          }
          const whole = buf.subarray(0, cut + 2);
          carry = cut + 2 < buf.length ? buf.subarray(cut + 2) : undefined;
          const rows = countRows(whole);
          got += rows;
          last = whole;
          failures = 0;
          yield { bytes: whole, rows, cells: countDocumentCells(whole) };
        }
      } catch (e) {
        throw new RemoteError(`${gateway.url}: the connection dropped mid-range (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      if (carry !== undefined) throw new RemoteError(`${gateway.url}: the stream ended inside a row`);
      const counted = res.trailers[ROWS_TRAILER];
      if (counted !== undefined && Number(counted) !== got) throw new RemoteError(`${gateway.url}: the gateway counted ${counted} rows, ${got} arrived`, 502);
      return;
    } catch (e) {
      if (options.signal?.aborted) throw options.signal.reason ?? e;
      if (!(e instanceof RemoteError) || !e.retryable) throw e;
      failures++;
      if (failures > MAX_RETRIES || attempt >= MAX_ATTEMPTS) throw new RemoteError(`${e.message}; gave up after ${attempt} attempts`);
      // Continue after the last whole row received: none twice, none missing. A wildcard or
      // single-row request (eid) takes no start, so it is only retried when nothing arrived.
      if (last !== undefined && range.params.eid !== undefined)
        throw new RemoteError(`${e.message}; an eid request cannot continue after a partial answer`, 400);
      if (last !== undefined) start = keyAfter(rowKeyOfDocument(lastRowOf(last), layout.keyFormat, 3));
      if (remaining >= 0) remaining = Math.max(0, remaining - got);
      const wait = backoffMs(failures, options.backoffMs);
      options.onRetry?.(e, wait);
      await waitToRetry(wait, options.signal);
    } finally {
      if (!(res instanceof Error)) res.destroy();
    }
  }
}
