/**
 * The split ranges of a remote export: GET .../splits answers (revision 3: `rowkey_hex=` bounds,
 * null = open) as row-key bounds, cut to the selected key range [start, end).
 */
import { CliError } from './cli-error.js';

export interface SplitRange {
  readonly start?: Buffer;
  readonly end?: Buffer;
  readonly estimatedRows?: number;
}

interface SplitsBody {
  readonly start_param?: string;
  readonly splits?: { start: string | null; end: string | null; estimated_rows: number | null }[];
}

function bound(text: string | null): Buffer | undefined {
  if (text === null) return undefined;
  const m = /^rowkey_hex=((?:[0-9a-fA-F]{2})*)$/.exec(text);
  if (!m) throw new CliError(`the gateway's split bound ${JSON.stringify(text)} is not a rowkey_hex= form (--url needs a revision 3 gateway)`);
  return Buffer.from(m[1]!, 'hex');
}

export function parseSplits(body: unknown): SplitRange[] {
  const b = body as SplitsBody;
  if (b.start_param !== 'start_eid' || !Array.isArray(b.splits))
    throw new CliError('the gateway does not serve revision 3 (export --url reads start_eid ranges)');
  return b.splits.map((s) => ({ start: bound(s.start), end: bound(s.end), estimatedRows: s.estimated_rows ?? undefined }));
}

const before = (a: Buffer | undefined, b: Buffer | undefined): boolean => a !== undefined && b !== undefined && Buffer.compare(a, b) < 0;

/** The ranges cut to [start, end) (undefined = open); ranges outside it are dropped. */
export function clipRanges(ranges: readonly SplitRange[], start: Buffer | undefined, end: Buffer | undefined): SplitRange[] {
  const out: SplitRange[] = [];
  for (const r of ranges) {
    const s = r.start === undefined ? start : start === undefined || before(start, r.start) ? r.start : start;
    const e = r.end === undefined ? end : end === undefined || before(r.end, end) ? r.end : end;
    if (s !== undefined && e !== undefined && Buffer.compare(s, e) >= 0) continue;
    out.push({ start: s, end: e, estimatedRows: r.estimatedRows });
  }
  return out.length === 0 ? [{ start, end, estimatedRows: 0 }] : out;
}
