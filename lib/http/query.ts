/**
 * Query strings, strictly: every parameter at most once, valid percent-encoding, `+` as space
 * (form encoding, as the Ruby client sends). Raw `[ ] " , :` are accepted unencoded because the
 * original's Python client never encoded its query values (docs/interface.md, "Compatibility with KijiREST's clients").
 */
import { rgError } from '../errors.js';
import { hexDigit } from '../model/keys/binary-text.js';

export type Query = ReadonlyMap<string, string>;

export function parseQuery(search: string): Query {
  const out = new Map<string, string>();
  // Cut with indexOf rather than split('&'): the array and the slices cost 80 ns of a point
  // read's 230 ns here (bench/request-costs.ts).
  for (let start = 0; start < search.length;) {
    let end = search.indexOf('&', start);
    if (end < 0) end = search.length;
    if (end > start) {
      const eq = search.indexOf('=', start);
      const nameEnd = eq < 0 || eq > end ? end : eq;
      const name = decode(search.slice(start, nameEnd), 'parameter name');
      const value = nameEnd === end ? '' : decode(search.slice(nameEnd + 1, end), `value of parameter ${name}`);
      if (out.has(name)) throw rgError('RG_ERR_BAD_PARAMETER', `parameter ${name} is given more than once`);
      out.set(name, value);
    }
    start = end + 1;
  }
  return out;
}

function decode(text: string, what: string): string {
  const plus = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  const first = plus.indexOf('%');
  if (first < 0) return plus;
  return decodeAsciiEscapes(plus, first) ?? decodeOrFail(plus, text, what);
}

function decodeOrFail(plus: string, text: string, what: string): string {
  try {
    return decodeURIComponent(plus);
  } catch {
    throw rgError('RG_ERR_BAD_PARAMETER', `${what} has invalid percent-encoding: ${JSON.stringify(text.slice(0, 200))}`);
  }
}

/**
 * `%XX` escapes of ASCII characters decoded by hand (`eid=%5B123%5D`), the same text
 * decodeURIComponent gives at a third of its 90 ns; undefined at the first escape that is not
 * one (a UTF-8 byte, bad hex), for decodeURIComponent to decode or refuse the whole text.
 */
function decodeAsciiEscapes(text: string, first: number): string | undefined {
  let out = '';
  let chunk = 0;
  for (let i = first; i >= 0; i = text.indexOf('%', i)) {
    // -1 for a character that is no hex digit (NaN past the end reads as one).
    const high = hexDigit(text.charCodeAt(i + 1));
    const low = hexDigit(text.charCodeAt(i + 2));
    if (high < 0 || high >= 8 || low < 0) return undefined;
    out += text.slice(chunk, i) + String.fromCharCode(high * 16 + low);
    i += 3;
    chunk = i;
  }
  return out + text.slice(chunk);
}

/**
 * The query parameters a route takes (its entry in routes.ts), checked by the server before the
 * route's handler runs. The sets are built once, with the route table: a request allocates nothing
 * for the check unless it fails.
 */
export interface QueryParams {
  /** The named parameters, in the order a 400 lists them. */
  readonly names: ReadonlySet<string>;
  /** A family of names, `<prefix><key>` with something after the prefix (`fresh.<key>`). */
  readonly prefix?: string;
  /** What to send instead of a parameter of another revision, by its name (for the 400 naming it). */
  readonly hints?: ReadonlyMap<string, string>;
  /** The names beyond `names`, described for the OpenAPI document (the `prefix` family, or the handler's own). */
  readonly further?: string;
  /** The handler checks the names itself (revision 1 PUT takes `<family:qualifier>` names): the server does not. */
  readonly handlerChecks?: true;
}

/**
 * Rejects parameters the route does not know, naming them (a typo should not be silently ignored);
 * `revision` is the served one, for the message.
 */
export function allowOnly(query: Query, allowed: QueryParams, revision: number): void {
  if (query.size === 0) return;
  const { names, prefix } = allowed;
  for (const name of query.keys()) {
    if (names.has(name)) continue;
    if (prefix !== undefined && name.length > prefix.length && name.startsWith(prefix)) continue;
    const known = [...names, ...(prefix === undefined ? [] : [`${prefix}<key>`])];
    const hint = allowed.hints?.get(name);
    throw rgError(
      'RG_ERR_BAD_PARAMETER',
      `unknown parameter ${name} for this route (the server speaks revision ${revision}; ${hint === undefined ? '' : `${hint}; `}known: ${known.join(', ') || 'none'})`,
    );
  }
}
