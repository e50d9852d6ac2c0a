/**
 * Query strings, strictly: every parameter at most once, valid percent-encoding, `+` as space
 * (form encoding, as the Ruby client sends). Raw `[ ] " , :` are accepted unencoded because the
 * original's Python client never encoded its query values (kijirest-behaviour.md 7.1).
 */
import { rgError } from '../errors.js';

export type Query = ReadonlyMap<string, string>;

export function parseQuery(search: string): Query {
  const out = new Map<string, string>();
  if (search === '') return out;
  for (const part of search.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq), 'parameter name');
    const value = eq < 0 ? '' : decode(part.slice(eq + 1), `value of parameter ${name}`);
    if (out.has(name)) throw rgError('RG_ERR_BAD_PARAMETER', `parameter ${name} is given more than once`);
    out.set(name, value);
  }
  return out;
}

function decode(text: string, what: string): string {
  const plus = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!plus.includes('%')) return plus;
  try {
    return decodeURIComponent(plus);
  } catch {
    throw rgError('RG_ERR_BAD_PARAMETER', `${what} has invalid percent-encoding: ${JSON.stringify(text.slice(0, 200))}`);
  }
}

/**
 * Rejects parameters the route does not know, naming them (a typo should not be silently ignored).
 * `prefix` admits a family of names (`fresh.<key>`), each with something after the prefix;
 * `hints` says what to send instead of a parameter of another revision.
 */
export function allowOnly(query: Query, allowed: ReadonlySet<string>, revision: number, prefix?: string, hints?: ReadonlyMap<string, string>): void {
  for (const name of query.keys()) {
    if (allowed.has(name)) continue;
    if (prefix !== undefined && name.length > prefix.length && name.startsWith(prefix)) continue;
    const known = [...allowed, ...(prefix === undefined ? [] : [`${prefix}<key>`])];
    const hint = hints?.get(name);
    throw rgError(
      'RG_ERR_BAD_PARAMETER',
      `unknown parameter ${name} for this route (the server speaks revision ${revision}; ${hint === undefined ? '' : `${hint}; `}known: ${known.join(', ') || 'none'})`,
    );
  }
}
