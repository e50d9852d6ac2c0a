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
