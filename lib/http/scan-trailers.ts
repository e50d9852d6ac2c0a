/**
 * The HTTP trailers a complete streamed scan ends with (docs/interface.md, "The row stream"): the rows sent
 * and, when `limit` stopped the scan before the end of its range, where the next page starts, in
 * the form the revision's start parameter takes (revision 3 start_eid: `rowkey_hex=<hex>`;
 * revisions 1-2 start_rk: hex). A stream cut short (an error, a dropped client) has none, so a
 * client that reads trailers can tell a complete page from a truncated one.
 *
 * The scan asks the store for one row more than `limit`; that row, cut off the last chunk and
 * never sent, says whether there is a next page and where it starts (its row key, carried by the
 * chunk: the document is never read back). Trailers go out only on
 * chunked responses (HTTP/1.1); clients that ignore them see exactly the same bytes.
 */
import type { Revision } from '../config/config.js';
import { dialectOf } from '../rows/dialect.js';

export const ROWS_TRAILER = 'x-rowgate-rows';
export const NEXT_START_TRAILER = 'x-rowgate-next-start';

/** The trailers of a complete scan of `rows` rows; `nextRowKey` is the key of the first row not sent (limit reached). */
export function scanTrailers(rows: number, nextRowKey: Buffer | undefined, revision: Revision): Record<string, string> {
  const trailers: Record<string, string> = { [ROWS_TRAILER]: String(rows) };
  if (nextRowKey !== undefined) trailers[NEXT_START_TRAILER] = dialectOf(revision).formatBound(nextRowKey);
  return trailers;
}
