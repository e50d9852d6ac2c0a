/**
 * A small tokenizer for entity ids written as lenient JSON (Jackson with single quotes, as
 * KijiREST parsed them): an array of strings, integers, null and `[]` wildcards, or one bare
 * primitive. Hand-written because JSON.parse rounds 64-bit integers.
 */
import { rgError } from '../../errors.js';
import { quoteInput } from './binary-text.js';
import { WILDCARD, type ComponentValue, type Wildcard } from '../types.js';
import { isInt64 } from '../cells/int64.js';

export type ParsedComponent = ComponentValue | Wildcard;

export interface ParsedComponents {
  /** false when the text was one bare primitive (revision 1/2 shell form). */
  readonly array: boolean;
  readonly items: ParsedComponent[];
}

/** An integer literal as number when exact, else bigint; outside 64 bits is an error (null). */
export function integerValue(literal: string): number | bigint | null {
  const n = Number(literal);
  if (Number.isSafeInteger(n)) return n === 0 ? 0 : n; // no -0
  const b = BigInt(literal);
  return isInt64(b) ? b : null;
}

const ESCAPES = new Map([
  ['"', '"'],
  ["'", "'"],
  ['\\', '\\'],
  ['/', '/'],
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);

function isWs(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

/**
 * Parses `text` (named `what` in messages). Wildcards `[]` are only array elements and raise
 * RG_ERR_WILDCARD_NOT_ALLOWED unless allowed; an empty array as the whole id is an error.
 */
export function parseComponentsJson(text: string, what: string, allowWildcards: boolean): ParsedComponents {
  let i = 0;
  const fail = (problem: string, at = i) => rgError('RG_ERR_BAD_ENTITY_ID', `${what} ${quoteInput(text)}: ${problem} at position ${at}`);
  const skipWs = () => {
    while (isWs(text[i])) i++;
  };

  const parseString = (): string => {
    const quote = text[i++];
    let out = '';
    let chunk = i;
    for (;;) {
      const c = text[i];
      if (c === undefined) throw fail('unterminated string');
      if (c === quote) break;
      if (c === '\\') {
        out += text.slice(chunk, i);
        const e = text[i + 1];
        if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw fail('\\u must be followed by four hex digits');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          const r = e === undefined ? undefined : ESCAPES.get(e);
          if (r === undefined) throw fail(`unknown escape \\${e ?? ''} in a string`);
          out += r;
          i += 2;
        }
        chunk = i;
      } else {
        if (c < ' ') throw fail(`control character U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} must be escaped in a string`);
        i++;
      }
    }
    out += text.slice(chunk, i);
    i++;
    return out;
  };

  const parseNumber = (): number | bigint => {
    const start = i;
    if (text[i] === '-') i++;
    const digits = i;
    while (text[i] !== undefined && text[i]! >= '0' && text[i]! <= '9') i++;
    if (i === digits) throw fail('expected digits after -');
    if (text[digits] === '0' && i - digits > 1) throw fail('integers cannot have leading zeros', start);
    if (text[i] === '.' || text[i] === 'e' || text[i] === 'E') {
      const m = /^[-+.0-9eE]*/.exec(text.slice(i))![0];
      throw fail(`components must be integers, got the number ${text.slice(start, i) + m}`, start);
    }
    const v = integerValue(text.slice(start, i));
    if (v === null) throw fail(`integer ${text.slice(start, i)} is outside the 64-bit range`, start);
    return v;
  };

  const parseScalar = (): ComponentValue => {
    const c = text[i];
    if (c === '"' || c === "'") return parseString();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return parseNumber();
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    if (text.startsWith('true', i) || text.startsWith('false', i)) throw fail('booleans are not entity id components');
    if (c === '{') throw fail('objects are not entity id components');
    if (c === undefined) throw fail('unexpected end of text');
    throw fail(`unexpected character ${JSON.stringify(c)} (expected a string, an integer or null)`);
  };

  const parseElement = (index: number): ParsedComponent => {
    if (text[i] !== '[') return parseScalar();
    const at = i++;
    skipWs();
    if (text[i] !== ']') throw fail('arrays inside an entity id must be empty (the wildcard [])', at);
    i++;
    if (!allowWildcards) {
      throw rgError(
        'RG_ERR_WILDCARD_NOT_ALLOWED',
        `${what} ${quoteInput(text)}: the wildcard [] (component ${index}) is not accepted here, only a complete entity id`,
      );
    }
    return WILDCARD;
  };

  skipWs();
  let result: ParsedComponents;
  if (text[i] === '[') {
    i++;
    skipWs();
    const items: ParsedComponent[] = [];
    if (text[i] === ']') {
      i++;
    } else {
      for (;;) {
        items.push(parseElement(items.length));
        skipWs();
        if (text[i] === ',') {
          i++;
          skipWs();
        } else if (text[i] === ']') {
          i++;
          break;
        } else {
          throw fail(text[i] === undefined ? 'missing ]' : `expected , or ] but found ${JSON.stringify(text[i])}`);
        }
      }
    }
    result = { array: true, items };
  } else {
    result = { array: false, items: [parseScalar()] };
  }
  skipWs();
  if (i < text.length) throw fail('unexpected text after the entity id');
  if (result.items.length === 0) throw rgError('RG_ERR_BAD_ENTITY_ID', `${what} ${quoteInput(text)} has no components`);
  return result;
}
