/**
 * Split points of a table for exports (GET .../splits): contiguous row-key ranges that together
 * cover the table, each with an estimate of what it holds. Each backend finds fine-grained
 * pieces with estimated sizes its own way; groupPieces turns them into at most N ranges of about
 * equal size.
 */

/** A range of row keys [start, end); undefined = open (before the first or past the last row). */
export interface KeySplit {
  readonly start?: Buffer;
  readonly end?: Buffer;
  /** Estimated rows, when the store can tell (the embedded store can; Bigtable's samples hold bytes only). */
  readonly estimatedRows?: number;
  /** Estimated stored bytes. */
  readonly estimatedBytes: number;
}

/** Most ranges one request may ask for. */
export const MAX_SPLITS = 1024;

/**
 * Joins contiguous pieces (in key order, covering the table) into at most `parts` ranges of about
 * equal estimated bytes. The first range starts open and the last ends open, whatever the pieces
 * say, so the ranges cover every key (rows written before the first piece or after the last too).
 */
export function groupPieces(pieces: readonly KeySplit[], parts: number): KeySplit[] {
  if (pieces.length === 0) return [{ estimatedBytes: 0, estimatedRows: 0 }];
  const total = pieces.reduce((sum, p) => sum + p.estimatedBytes, 0);
  const withRows = pieces.every((p) => p.estimatedRows !== undefined);
  const out: KeySplit[] = [];
  let start: Buffer | undefined;
  let bytes = 0;
  let rows = 0;
  let seen = 0;
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!;
    bytes += p.estimatedBytes;
    rows += p.estimatedRows ?? 0;
    seen += p.estimatedBytes;
    const last = i === pieces.length - 1;
    // Cut once the running total reaches the next group's share (never an empty leading group).
    const cut = !last && out.length < parts - 1 && bytes > 0 && seen >= (total * (out.length + 1)) / parts;
    if (cut || last) {
      out.push({ start, end: last ? undefined : p.end, estimatedBytes: Math.round(bytes), ...(withRows && { estimatedRows: Math.round(rows) }) });
      start = p.end;
      bytes = 0;
      rows = 0;
    }
  }
  return out;
}
