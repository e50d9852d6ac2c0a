/**
 * The targets of a POST's rows (`{"targets": [...]}`), kept compactly while the body is read and
 * written out in pieces. The answer to a large POST is larger than many of its rows (about 70
 * bytes of target for a 63-byte row): held as one string per target (~100 bytes each) they cost
 * more than the rows themselves, so only what differs between targets (the part after the
 * table's rows path, JSON-escaped) is kept, a block of targets to one string.
 */

/** Targets per block: one piece of the answer is ~70 KB for typical targets. */
const BLOCK = 1024;

/** Separates the targets of a block: JSON-escaped text has no raw control character. */
const SEPARATOR = '\u0001';

export class PostTargets {
  count = 0;
  /** JSON-escaped text of the common start of every target. */
  private readonly prefix: string;
  private readonly blocks: string[] = [];
  private block: string[] = [];
  /** UTF-8 bytes of the sealed blocks. */
  private blockBytes = 0;

  /** @param common the start every target has (the table's rows path: dialect.ts rowsPath). */
  constructor(common: string) {
    this.prefix = escaped(common);
  }

  add(target: string): void {
    const text = escaped(target);
    if (!text.startsWith(this.prefix)) throw new Error(`target ${target} does not start with ${this.prefix}`);
    this.block.push(text.slice(this.prefix.length));
    this.count++;
    if (this.block.length === BLOCK) this.seal();
  }

  /** The answer's JSON text, in pieces of one block each. */
  *pieces(): Generator<string> {
    this.seal();
    yield '{"targets":[';
    for (let b = 0; b < this.blocks.length; b++) {
      const open = `${b === 0 ? '' : ','}"${this.prefix}`;
      yield open + this.blocks[b]!.replaceAll(SEPARATOR, `","${this.prefix}`) + '"';
    }
    yield ']}';
  }

  /** Whether the answer is small enough to send as one string. */
  get small(): boolean {
    return this.count <= BLOCK;
  }

  /** The byte length of the answer, without writing it (pieces() gives exactly this many bytes). */
  byteLength(): number {
    this.seal();
    const prefix = Buffer.byteLength(this.prefix, 'utf8');
    // Each target is a quote, the prefix, its own part, a quote; a comma between two; the blocks
    // hold the parts with one separator between two.
    const targets = this.count * (prefix + 2) + Math.max(0, this.count - 1) + this.blockBytes - Math.max(0, this.count - this.blocks.length);
    return '{"targets":['.length + targets + ']}'.length;
  }

  private seal(): void {
    if (this.block.length === 0) return;
    const block = this.block.join(SEPARATOR);
    this.blocks.push(block);
    this.blockBytes += Buffer.byteLength(block, 'utf8');
    this.block = [];
  }
}

/** JSON.stringify without its quotes. */
function escaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}
