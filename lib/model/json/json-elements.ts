/**
 * A JSON document arriving in pieces, cut into the texts of its rows: each element of a top-level
 * array, or the top-level value itself when it is not an array. Each text is then parsed on its own
 * by parseExactJson (the one value builder), at its place in the document (position and depth), so
 * a body's verdict, its error messages and the values built do not depend on how it was cut into
 * pieces, and neither the body's text nor its whole parsed tree is ever held at once.
 *
 * Only the top level is read here: an element ends where its brackets balance (outside strings),
 * or, for a scalar, where a character that cannot be part of it begins. Whatever an element holds
 * is judged by parseExactJson; an element whose brackets do not match fails there.
 */
import { rgError } from '../../errors.js';
import { parseExactJson } from './exact-json.js';
import type { JsonValue } from '../types.js';

/** Where the splitter is in the document. */
const State = {
  /** Before the top-level value. */
  Start: 0,
  /** In a top-level array, before its first element or `]`. */
  ArrayOpen: 1,
  /** In a top-level array, after a `,`: an element must come. */
  ArrayNext: 2,
  /** In a top-level array, after an element: `,` or `]`. */
  ArrayAfter: 3,
  /** Inside an element (or the top-level value). */
  Element: 4,
  /** After the end of the document: only whitespace may follow. */
  Done: 5,
} as const;
type State = (typeof State)[keyof typeof State];

/** What the current element is, which decides how its end is found. */
const Kind = { Container: 0, String: 1, Scalar: 2 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

/** JSON's four whitespace characters (RFC 8259 section 2). */
function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The first character that cannot continue a scalar (number, true, false, null). */
const SCALAR_END = /[^0-9A-Za-z+.-]/g;

export class JsonElementSplitter {
  /** Elements completed so far. */
  rows = 0;
  private state: State = State.Start;
  private topIsArray = false;
  /** Characters of the document consumed before the current piece. */
  private consumed = 0;
  /** The current element: its text so far, where it starts, what it is. */
  private pending = '';
  private start = 0;
  private kind: Kind = Kind.Scalar;
  /** Open brackets of a container element. */
  private nesting = 0;
  /** Inside a string of the element; the opening quote of a string element is still to be skipped. */
  private inString = false;
  private skipOpeningQuote = false;
  /** The piece ended inside a string on a backslash that escapes the next character. */
  private escaped = false;

  /** @param what names the document in errors ("request body"). */
  constructor(private readonly what: string) {}

  /** Feeds the next piece of the document; returns the values of the elements it completed. */
  push(piece: string): JsonValue[] {
    const out: JsonValue[] = [];
    let i = 0;
    while (i < piece.length) {
      if (this.state === State.Element) {
        const end = this.scanElement(piece, i);
        if (end < 0) {
          this.pending += i === 0 ? piece : piece.slice(i);
          break;
        }
        this.pending += piece.slice(i, end);
        out.push(this.finishElement());
        i = end;
        continue;
      }
      const c = piece.charCodeAt(i);
      if (isWhitespace(c)) {
        i++;
        continue;
      }
      switch (this.state) {
        case State.Start:
          if (c === 0x5b /* [ */) {
            this.topIsArray = true;
            this.state = State.ArrayOpen;
            i++;
          } else {
            this.beginElement(piece, i);
          }
          break;
        case State.ArrayOpen:
          if (c === 0x5d /* ] */) {
            this.state = State.Done;
            i++;
          } else {
            this.beginElement(piece, i);
          }
          break;
        case State.ArrayNext:
          this.beginElement(piece, i);
          break;
        case State.ArrayAfter:
          if (c === 0x2c /* , */) this.state = State.ArrayNext;
          else if (c === 0x5d /* ] */) this.state = State.Done;
          else this.fail(`expected ',' or ']' after row ${this.rows - 1}`, i);
          i++;
          break;
        default:
          this.fail('unexpected text after the JSON value', i);
      }
    }
    this.consumed += piece.length;
    return out;
  }

  /** The end of the document: the value of a last element that ends with it, if any. */
  end(): JsonValue[] {
    const out: JsonValue[] = [];
    // A scalar ends with the document; any other element still open fails in the parser, which
    // names what is missing (an unterminated string, a missing bracket) and where.
    if (this.state === State.Element) out.push(this.finishElement());
    if (this.state === State.Start) throw rgError('RG_ERR_BAD_BODY', `${this.what} is empty: expected a row object or an array of rows`);
    if (this.state !== State.Done) this.fail(this.state === State.ArrayAfter ? "unexpected end of input: expected ',' or ']'" : 'unexpected end of input', 0);
    return out;
  }

  private beginElement(piece: string, i: number): void {
    const c = piece.charCodeAt(i);
    this.state = State.Element;
    this.pending = '';
    this.start = this.consumed + i;
    this.nesting = 0;
    this.inString = false;
    this.skipOpeningQuote = false;
    this.escaped = false;
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      this.kind = Kind.Container;
    } else if (c === 0x22 /* " */) {
      this.kind = Kind.String;
      this.inString = true;
      this.skipOpeningQuote = true;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) {
      // Numbers and literals; a misspelt literal fails in the parser, naming it.
      this.kind = Kind.Scalar;
    } else {
      // No value starts with this (`]` after a `,`, a stray `}`, a byte order mark...).
      this.fail(`unexpected character ${JSON.stringify(piece[i])}`, i);
    }
  }

  /** Index in `piece` just past the end of the current element, or -1 when it goes on. */
  private scanElement(piece: string, from: number): number {
    if (this.kind === Kind.Scalar) {
      SCALAR_END.lastIndex = from;
      return SCALAR_END.exec(piece) === null ? -1 : SCALAR_END.lastIndex - 1;
    }
    let i = from;
    if (this.skipOpeningQuote) {
      this.skipOpeningQuote = false;
      i++;
    }
    for (;;) {
      if (this.inString) {
        const close = this.closingQuote(piece, i);
        if (close < 0) return -1;
        this.inString = false;
        i = close + 1;
        if (this.kind === Kind.String) return i;
      }
      // Outside strings only brackets and quotes matter (a plain loop: a regex search per
      // character found took half the time of cutting a typical row).
      for (; i < piece.length; i++) {
        const c = piece.charCodeAt(i);
        if (c === 0x22 /* " */) {
          this.inString = true;
          i++;
          break;
        }
        if (c === 0x7b /* { */ || c === 0x5b /* [ */) this.nesting++;
        else if ((c === 0x7d /* } */ || c === 0x5d) /* ] */ && --this.nesting === 0) return i + 1;
      }
      if (!this.inString) return -1;
    }
  }

  /**
   * Index of the quote that closes the string being read, or -1 when the piece ends first. A quote
   * is escaped when an odd run of backslashes precedes it; runs are counted from `from` on, since
   * everything before it is settled (a run cut at the end of a piece leaves `escaped` behind).
   */
  private closingQuote(piece: string, from: number): number {
    let i = from;
    if (this.escaped) {
      if (i >= piece.length) return -1;
      this.escaped = false;
      i++;
    }
    for (;;) {
      const quote = piece.indexOf('"', i);
      const runEnd = quote < 0 ? piece.length : quote;
      let run = 0;
      while (runEnd - run - 1 >= i && piece.charCodeAt(runEnd - run - 1) === 0x5c /* \ */) run++;
      if (quote < 0) {
        this.escaped = run % 2 === 1;
        return -1;
      }
      if (run % 2 === 0) return quote;
      i = quote + 1;
    }
  }

  private finishElement(): JsonValue {
    const text = this.pending;
    this.pending = '';
    const value = parseExactJson(text, this.what, { offset: this.start, depth: this.topIsArray ? 1 : 0 });
    this.rows++;
    this.state = this.topIsArray ? State.ArrayAfter : State.Done;
    return value;
  }

  private fail(problem: string, i: number): never {
    throw rgError('RG_ERR_BAD_BODY', `${this.what} is not valid JSON: ${problem} at position ${this.consumed + i}`);
  }
}
