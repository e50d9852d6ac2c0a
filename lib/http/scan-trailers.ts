/**
 * The HTTP trailers a complete streamed scan ends with (DESIGN.md 4, stream policy): the rows sent
 * and, when `limit` stopped the scan before the end of its range, where the next page starts, in
 * the form the revision's start parameter takes (revision 3 start_eid: `rowkey_hex=<hex>`;
 * revisions 1-2 start_rk: hex). A stream cut short (an error, a dropped client) has none, so a
 * client that reads trailers can tell a complete page from a truncated one.
 *
 * The scan asks the store for one row more than `limit`; that row, cut off the last chunk and
 * never sent, says whether there is a next page and where it starts. Trailers go out only on
 * chunked responses (HTTP/1.1); clients that ignore them see exactly the same bytes.
 */
import type { Revision } from '../config/config.js';
import type { RowKeyFormat } from '../model/types.js';
import { dialectOf } from '../rows/dialect.js';
import { rowKeyOfDocument } from '../rows/row-format.js';

export const ROWS_TRAILER = 'x-rowgate-rows';
export const NEXT_START_TRAILER = 'x-rowgate-next-start';

/** The trailers of a complete scan of `rows` rows; `nextRow` is the first row not sent (limit reached). */
export function scanTrailers(rows: number, nextRow: Buffer | undefined, format: RowKeyFormat, revision: Revision): Record<string, string> {
  const trailers: Record<string, string> = { [ROWS_TRAILER]: String(rows) };
  if (nextRow !== undefined) trailers[NEXT_START_TRAILER] = dialectOf(revision).formatBound(rowKeyOfDocument(nextRow, format, revision));
  return trailers;
}
