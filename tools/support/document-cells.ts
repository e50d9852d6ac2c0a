/**
 * The cells in row documents as a gateway sends them (`{"entityId":...,"cells":{"<family>":
 * {"<qualifier>":[{cell},{cell}]}}}`, every revision): the objects at the fifth level of nesting,
 * counted in one pass over the bytes that steps over strings (a value's text can hold any bracket).
 * A remote export receives documents, not a count, and reports the cells it wrote as a local one
 * does (docs/cli.md); parsing each document whole would cost far more than this walk.
 */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CELL_DEPTH = 5;

export function countDocumentCells(bytes: Uint8Array): number {
  let depth = 0;
  let cells = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      for (i++; i < n; i++) {
        const c = bytes[i]!;
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) break;
      }
    } else if (b === 0x7b /* { */) {
      if (++depth === CELL_DEPTH) cells++;
    } else if (b === 0x5b /* [ */) depth++;
    else if (b === 0x7d /* } */ || b === 0x5d /* ] */) depth--;
  }
  return cells;
}
