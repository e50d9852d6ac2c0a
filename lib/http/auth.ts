/**
 * Bearer tokens (configuration `auth.tokens`). The configuration holds only SHA-256 digests; a
 * presented token is hashed and compared with every configured digest in constant time
 * (crypto.timingSafeEqual on equal-length digests, no early exit), so neither the token nor
 * which digest matched leaks through timing.
 *
 * Scopes are per instance: the instance's own entry wins over '*'. `read` allows GET, `write`
 * allows POST/PUT/DELETE, `*` both. Resources outside any instance (/v1, /v1/version,
 * /v1/instances) are readable with any valid token; /v1/instances lists only readable instances.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthConfig, Scope } from '../config/config.js';
import { rgError } from '../errors.js';
import type { AuthFailureReason } from '../metrics/metrics.js';

export type Access = 'read' | 'write';

export interface Principal {
  readonly name: string;
  /** May this token do `access` on `instance`? */
  can(instance: string, access: Access): boolean;
}

interface CompiledToken {
  readonly name: string;
  readonly digest: Buffer;
  readonly scopes: ReadonlyMap<string, Scope>;
}

export function sha256Hex(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function allows(scope: Scope | undefined, access: Access): boolean {
  return scope === '*' || scope === access;
}

/** Thrown for a missing or unknown token; carries the challenge header, and the reason for metrics. */
function unauthorized(message: string, authFailure: Exclude<AuthFailureReason, 'scope'>) {
  const challenge = authFailure !== 'missing' ? 'Bearer realm="rowgate", error="invalid_token"' : 'Bearer realm="rowgate"';
  return Object.assign(rgError('RG_ERR_UNAUTHORIZED', message), { headers: { 'www-authenticate': challenge }, authFailure });
}

export class Authenticator {
  private readonly tokens: readonly CompiledToken[];

  constructor(config: AuthConfig) {
    this.tokens = config.tokens.map((t) => ({
      name: t.name,
      digest: Buffer.from(t.sha256, 'hex'),
      scopes: new Map(Object.entries(t.scopes)),
    }));
  }

  /** The token's principal, or RG_ERR_UNAUTHORIZED (401) when the header is missing, malformed or unknown. */
  authenticate(authorization: string | undefined): Principal {
    if (authorization === undefined || authorization === '') throw unauthorized('a bearer token is required (Authorization: Bearer <token>)', 'missing');
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!m) throw unauthorized('the Authorization header must be "Bearer <token>"', 'malformed');
    const digest = createHash('sha256').update(m[1]!, 'utf8').digest();
    let found: CompiledToken | undefined;
    for (const t of this.tokens) {
      // Every digest is compared, whatever matched before.
      if (timingSafeEqual(t.digest, digest) && found === undefined) found = t;
    }
    if (found === undefined) throw unauthorized('the bearer token is not valid', 'unknown_token');
    const token = found;
    return {
      name: token.name,
      can: (instance, access) => allows(token.scopes.has(instance) ? token.scopes.get(instance) : token.scopes.get('*'), access),
    };
  }
}

/** GET (and HEAD) read; everything else writes. */
export function accessOf(method: string): Access {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/** RG_ERR_FORBIDDEN (403) unless the principal may do `access` on `instance`. */
export function requireScope(principal: Principal, instance: string, access: Access): void {
  if (!principal.can(instance, access)) {
    throw Object.assign(rgError('RG_ERR_FORBIDDEN', `token ${principal.name} has no ${access} scope on instance ${instance}`), {
      authFailure: 'scope' as const,
    });
  }
}
