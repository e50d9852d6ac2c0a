/**
 * What a reload (SIGHUP) may change in a running gateway. The listeners, the store and the route
 * table are made once at startup, so their settings need a restart; everything read per request
 * changes live. limits.maxHeaderBytes is given to node's HTTP parser when the server is made, so it
 * needs a restart too.
 */
import type { Config, Limits } from './config.js';

export const RESTART_ONLY = ['host', 'port', 'revision', 'store', 'tls', 'admin'] as const;
export const LIVE = ['auth', 'readOnly', 'cors', 'limits', 'logLevel', 'instances', 'compression'] as const;

export interface ReloadPlan {
  /** The configuration to run: the new file's live settings, the running restart-only ones. */
  readonly config: Config;
  /** Live settings that changed (applied). */
  readonly changed: readonly string[];
  /** Settings that changed but need a restart (not applied). */
  readonly ignored: readonly string[];
  /** Why the whole file is refused (the running configuration stays), if it is. */
  readonly refused?: string;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function planReload(running: Config, next: Config): ReloadPlan {
  // A file that lost its auth section (an edit gone wrong, a template) must not open a gateway
  // that required tokens; a restart may still start an open one.
  if (running.auth !== undefined && next.auth === undefined && next.authOptional !== true) {
    return {
      config: running,
      changed: [],
      ignored: [],
      refused:
        'configuration auth: the file has no auth tokens, which would serve every client without a token; write auth: {required: false} to open the gateway on purpose',
    };
  }
  const ignored: string[] = RESTART_ONLY.filter((k) => !same(running[k], next[k]));
  const changed: string[] = LIVE.filter((k) => !same(running[k], next[k]));
  let limits: Limits = next.limits;
  if (limits.maxHeaderBytes !== running.limits.maxHeaderBytes) {
    ignored.push('limits.maxHeaderBytes');
    limits = { ...limits, maxHeaderBytes: running.limits.maxHeaderBytes };
    // The coded 414 must stay reachable below the running head limit (config/config.ts parseLimits).
    if (limits.urlBytes >= limits.maxHeaderBytes) {
      ignored.push('limits.urlBytes');
      limits = { ...limits, urlBytes: running.limits.urlBytes };
    }
    if (same(limits, running.limits)) changed.splice(changed.indexOf('limits'), 1);
  }
  const config: Config = {
    ...next,
    host: running.host,
    port: running.port,
    revision: running.revision,
    store: running.store,
    tls: running.tls,
    admin: running.admin,
    limits,
  };
  return { config, changed, ignored };
}
