/**
 * Strict JSON (RFC 8259) in which integers beyond ±Number.MAX_SAFE_INTEGER parse as bigint, so
 * 64-bit longs and counters survive exactly, and the printer that writes them back.
 */

import { rgError } from '../../errors.js';
import type { JsonValue } from '../types.js';

/** Deeper nesting is refused: every consumer walks values recursively. */
export const MAX_JSON_DEPTH = 512;

/**
 * Where a text parsed on its own sits in a larger document (a row cut out of a request body by
 * json-elements.ts): positions in errors count from `offset`, and `depth` containers enclose it,
 * so the nesting limit and the positions are those of parsing the whole document at once.
 */
export interface JsonTextPlace {
  readonly offset: number;
  readonly depth: number;
}

const WHOLE: JsonTextPlace = { offset: 0, depth: 0 };

/**
 * Parses `text`; `what` names it in errors ("request body", "eid", ...). JSON.parse is about 4x
 * faster than the hand parser, so it goes first; one walk of its result then finds what it cannot
 * represent: an integer literal beyond ±MAX_SAFE_INTEGER always yields an integral double outside
 * the safe range (rounding is monotonic), and nesting beyond MAX_JSON_DEPTH. Only then, and on
 * syntax errors (Node 20's messages lack positions), the hand parser runs and has the last word.
 * Both build the same values: objects with own properties only (a "__proto__" key is an own
 * property, as JSON.parse makes it, never the prototype).
 *
 * A key repeated in one object is refused (RG_ERR_BAD_BODY naming the key and its position):
 * JSON.parse keeps the last silently, so `"info":{...},"info":{...}` dropped the first family's
 * cells, and a repeated entityId wrote the row under the second. The walk counts the keys
 * JSON.parse kept and memberCount the members the text has; only when they differ (a key was
 * repeated) does the hand parser run, which finds the repeat and names it.
 *
 * This is the one JSON value builder of written rows: request bodies (each row of a body, whole
 * or streamed) and `rowgate import` lines go through it.
 */
export function parseExactJson(text: string, what: string, place: JsonTextPlace = WHOLE): JsonValue {
  let value: JsonValue | undefined;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    value = undefined;
  }
  if (value !== undefined) {
    walkedKeys = 0;
    if (walk(value, place.depth) === WALK_OK && (walkedKeys === 0 || memberCount(text) === walkedKeys)) return value;
  }
  return new ExactParser(text, what, place).parseDocument();
}

/** Keys of the objects the last walk visited (a module variable: no object per walk). */
let walkedKeys = 0;

/**
 * The object members of a valid JSON text: its strings followed by a colon. Outside strings a
 * valid text has no quote, so strings are found by indexOf, each closed by the first quote not
 * escaped by an odd run of backslashes.
 */
function memberCount(t: string): number {
  let n = 0;
  let open = t.indexOf('"');
  while (open >= 0) {
    let close = t.indexOf('"', open + 1);
    while (close > 0 && escapedQuote(t, close)) close = t.indexOf('"', close + 1);
    if (close < 0) return -1; // not valid JSON; JSON.parse accepted it, so never here
    let i = close + 1;
    let c = t.charCodeAt(i);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++i);
    if (c === 0x3a /* : */) n++;
    open = t.indexOf('"', i);
  }
  return n;
}

/** Whether the quote at `q` is preceded by an odd run of backslashes. */
function escapedQuote(t: string, q: number): boolean {
  let run = 0;
  while (t.charCodeAt(q - run - 1) === 0x5c) run++;
  return run % 2 === 1;
}

const WALK_OK = 0;
const WALK_REPARSE = 1;

/** Recursion is bounded: the walk stops at MAX_JSON_DEPTH. */
function walk(v: JsonValue, depth: number): number {
  if (typeof v === 'number') return Number.isInteger(v) && !Number.isSafeInteger(v) ? WALK_REPARSE : WALK_OK;
  if (typeof v !== 'object' || v === null) return WALK_OK;
  if (depth >= MAX_JSON_DEPTH) return WALK_REPARSE;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (walk(v[i], depth + 1) !== WALK_OK) return WALK_REPARSE;
  } else {
    for (const key in v) {
      walkedKeys++;
      if (walk(v[key], depth + 1) !== WALK_OK) return WALK_REPARSE;
    }
  }
  return WALK_OK;
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

class ExactParser {
  private pos = 0;
  private depth: number;

  constructor(
    private readonly text: string,
    private readonly what: string,
    private readonly place: JsonTextPlace,
  ) {
    this.depth = place.depth;
  }

  parseDocument(): JsonValue {
    this.skipWs();
    const value = this.parseValue();
    this.skipWs();
    if (this.pos < this.text.length) this.fail('unexpected text after the JSON value');
    return value;
  }

  private fail(problem: string): never {
    throw rgError('RG_ERR_BAD_BODY', `${this.what} is not valid JSON: ${problem} at position ${this.place.offset + this.pos}`);
  }

  private skipWs(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      this.pos++;
    }
  }

  private parseValue(): JsonValue {
    const c = this.text[this.pos];
    switch (c) {
      case '{':
        return this.parseObject();
      case '[':
        return this.parseArray();
      case '"':
        return this.parseString();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      case undefined:
        return this.fail('unexpected end of input');
      default:
        if (c === '-' || (c >= '0' && c <= '9')) return this.parseNumber();
        return this.fail(`unexpected character ${JSON.stringify(c)}`);
    }
  }

  private literal(word: string, value: JsonValue): JsonValue {
    if (!this.text.startsWith(word, this.pos)) this.fail(`unexpected character ${JSON.stringify(this.text[this.pos])}`);
    this.pos += word.length;
    return value;
  }

  private enter(): void {
    if (++this.depth > MAX_JSON_DEPTH) this.fail(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  }

  private parseObject(): JsonValue {
    this.enter();
    this.pos++;
    const obj: { [key: string]: JsonValue } = {};
    this.skipWs();
    if (this.text[this.pos] === '}') {
      this.pos++;
      this.depth--;
      return obj;
    }
    for (;;) {
      if (this.text[this.pos] !== '"') this.fail('expected a property name');
      const keyAt = this.pos;
      const key = this.parseString();
      if (Object.prototype.hasOwnProperty.call(obj, key)) {
        throw rgError(
          'RG_ERR_BAD_BODY',
          `${this.what} has the key ${JSON.stringify(key)} twice in one object, again at position ${this.place.offset + keyAt}: a key may appear only once`,
        );
      }
      this.skipWs();
      if (this.text[this.pos] !== ':') this.fail("expected ':'");
      this.pos++;
      this.skipWs();
      const value = this.parseValue();
      // An own "__proto__" property, as JSON.parse makes, never the prototype.
      if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
      else obj[key] = value;
      this.skipWs();
      const c = this.text[this.pos];
      this.pos++;
      if (c === '}') break;
      if (c !== ',') {
        this.pos--;
        this.fail("expected ',' or '}'");
      }
      this.skipWs();
    }
    this.depth--;
    return obj;
  }

  private parseArray(): JsonValue {
    this.enter();
    this.pos++;
    const arr: JsonValue[] = [];
    this.skipWs();
    if (this.text[this.pos] === ']') {
      this.pos++;
      this.depth--;
      return arr;
    }
    for (;;) {
      arr.push(this.parseValue());
      this.skipWs();
      const c = this.text[this.pos];
      this.pos++;
      if (c === ']') break;
      if (c !== ',') {
        this.pos--;
        this.fail("expected ',' or ']'");
      }
      this.skipWs();
    }
    this.depth--;
    return arr;
  }

  private parseString(): string {
    const t = this.text;
    let i = this.pos + 1;
    let out = '';
    let chunkStart = i;
    for (;;) {
      if (i >= t.length) {
        this.pos = i;
        this.fail('unterminated string');
      }
      const c = t.charCodeAt(i);
      if (c === 0x22) break;
      if (c < 0x20) {
        this.pos = i;
        this.fail('control character in string');
      }
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += t.slice(chunkStart, i);
      const e = t[i + 1];
      if (e === 'u') {
        const hex = t.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          this.pos = i;
          this.fail('bad \\u escape');
        }
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else if (e !== undefined && ESCAPES[e] !== undefined) {
        out += ESCAPES[e];
        i += 2;
      } else {
        this.pos = i;
        this.fail('bad escape');
      }
      chunkStart = i;
    }
    out += t.slice(chunkStart, i);
    this.pos = i + 1;
    return out;
  }

  private parseNumber(): number | bigint {
    const t = this.text;
    const start = this.pos;
    let i = start;
    if (t[i] === '-') i++;
    if (t[i] === '0') i++;
    else if (t[i] >= '1' && t[i] <= '9') while (t[i] >= '0' && t[i] <= '9') i++;
    else {
      this.pos = i;
      this.fail('bad number');
    }
    let integral = true;
    if (t[i] === '.') {
      integral = false;
      i++;
      if (!(t[i] >= '0' && t[i] <= '9')) {
        this.pos = i;
        this.fail('bad number');
      }
      while (t[i] >= '0' && t[i] <= '9') i++;
    }
    if (t[i] === 'e' || t[i] === 'E') {
      integral = false;
      i++;
      if (t[i] === '+' || t[i] === '-') i++;
      if (!(t[i] >= '0' && t[i] <= '9')) {
        this.pos = i;
        this.fail('bad number');
      }
      while (t[i] >= '0' && t[i] <= '9') i++;
    }
    this.pos = i;
    const literal = t.slice(start, i);
    if (!integral || literal.length < 16) return Number(literal);
    const big = BigInt(literal);
    return big >= -MAX_SAFE && big <= MAX_SAFE ? Number(big) : big;
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A value as an error message quotes it: its compact JSON, except a number beyond a double's
 * range (1e400, which JSON readers take as Infinity; a JSON number is never NaN), which JSON would
 * print as null: "expected double, got null" named the wrong value.
 */
export function jsonForMessage(value: JsonValue): string {
  return value === Infinity || value === -Infinity ? `a number beyond a double's range (${value})` : stringifyExactJson(value);
}

/**
 * Compact JSON with bigints printed exactly. Strings are escaped by JSON.stringify (so CR and LF
 * are always escaped); non-finite numbers print as null, as JSON.stringify does.
 */
export function stringifyExactJson(value: JsonValue): string {
  try {
    return JSON.stringify(value);
  } catch (e) {
    // Only bigints make JSON.stringify throw on a JsonValue; print those by hand.
    if (!(e instanceof TypeError)) throw e;
  }
  return printValue(value);
}

function printValue(value: JsonValue): string {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'object':
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map(printValue).join(',')}]`;
      {
        const parts: string[] = [];
        for (const key of Object.keys(value)) {
          const v = value[key];
          if (v !== undefined) parts.push(`${JSON.stringify(key)}:${printValue(v)}`);
        }
        return `{${parts.join(',')}}`;
      }
    default:
      return JSON.stringify(value);
  }
}
