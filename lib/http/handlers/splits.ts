/**
 * GET .../splits?n=N (every revision; beyond the interface, like eids and DELETE): up to N
 * contiguous row-key ranges that together cover the table, balanced by the store's size
 * estimates (Store.splits), so an export can fetch them in parallel and write them in order.
 * Each bound is written as the served revision's range parameters take it (revision 3
 * start_eid/end_eid: `rowkey_hex=<hex>`; revisions 1-2 start_rk/end_rk: plain hex); null is an
 * open end (leave the parameter out).
 */
import type { Revision } from '../../config/config.js';
import { rgError } from '../../errors.js';
import { MAX_SPLITS, type KeySplit } from '../../store/key-splits.js';
import { tableLayout, type Handler } from '../context.js';
import { dialectOf } from '../../rows/dialect.js';
import { sendJson } from '../respond.js';

function parseParts(text: string | undefined): number {
  if (text === undefined) return 1;
  const n = /^[0-9]{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_SPLITS))
    throw rgError('RG_ERR_BAD_PARAMETER', `n must be an integer from 1 to ${MAX_SPLITS}, got ${JSON.stringify(text.slice(0, 40))}`);
  return n;
}

/** The splits as GET splits answers them: bounds in the form the revision's range parameters take. */
function splitsBody(splits: readonly KeySplit[], revision: Revision): string {
  const dialect = dialectOf(revision);
  return JSON.stringify({
    start_param: dialect.startParam,
    end_param: dialect.endParam,
    splits: splits.map((s) => ({
      start: s.start === undefined ? null : dialect.formatBound(s.start),
      end: s.end === undefined ? null : dialect.formatBound(s.end),
      estimated_rows: s.estimatedRows ?? null,
      estimated_bytes: s.estimatedBytes,
    })),
  });
}

/** The 200 body's schema is serializers.ts schemas.tableSplits. */
export const getSplits: Handler = async (ctx, req, res, params, query) => {
  const parts = parseParts(query.get('n'));
  await tableLayout(ctx, params);
  const splits = await ctx.store.splits(params.instance!, params.table!, parts);
  sendJson(ctx, req, res, 200, splitsBody(splits, ctx.config.revision));
};
