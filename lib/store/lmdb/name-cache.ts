/**
 * Column names decoded once per scan: a table's rows mostly repeat the same family and qualifier
 * names, so a name's stored bytes are compared with the names met before (the one after the last
 * hit first) and its string reused. Decoding every name anew was ~20% of a scan thread's Avro
 * export (two strings a cell, --cpu-prof of 200,000 bench rows).
 */

/** Names remembered; a map family with more distinct qualifiers decodes the rest each time. */
const MAX_NAMES = 256;

export class NameCache {
  private readonly bytes: Buffer[] = [];
  private readonly texts: string[] = [];
  private next = 0;

  /** The UTF-8 text of `b[start, end)`. */
  text(b: Buffer, start: number, end: number): string {
    const n = this.bytes.length;
    // Rows repeat their column order: the name after the last one found is tried first, and once
    // the cache is full only that one (a map family of many qualifiers would otherwise compare
    // each cell with all MAX_NAMES names before decoding it anyway).
    const tries = n < MAX_NAMES ? n : 1;
    for (let k = 0, i = this.next; k < tries; k++, i = i + 1 === n ? 0 : i + 1) {
      if (sameBytes(this.bytes[i]!, b, start, end)) {
        this.next = i + 1 === n ? 0 : i + 1;
        return this.texts[i]!;
      }
    }
    const text = b.toString('utf8', start, end);
    if (n < MAX_NAMES) {
      this.bytes.push(Buffer.from(b.subarray(start, end)));
      this.texts.push(text);
      this.next = 0;
    }
    return text;
  }
}

/** Whether `name` holds the bytes of `b[start, end)`. */
export function sameBytes(name: Buffer, b: Buffer, start: number, end: number): boolean {
  const len = name.length;
  if (len !== end - start) return false;
  for (let i = 0; i < len; i++) if (name[i] !== b[start + i]) return false;
  return true;
}
