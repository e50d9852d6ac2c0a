/** What every handler needs: the configuration, the store, the logger and shared counters. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { rgError } from '../errors.js';
import type { TableLayout } from '../model/types.js';
import type { Store } from '../store/store.js';
import type { Principal } from './auth.js';
import type { Query } from './query.js';
import type { ScanSlots } from './scan-slots.js';

export interface AppContext {
  /** Replaced by a reload (SIGHUP); a request keeps the one it started with. */
  config: Config;
  readonly store: Store;
  readonly log: Logger;
  /** Streaming responses in flight (bounded by limits.maxScans), shared by every request. */
  readonly scans: ScanSlots;
  /** The OpenAPI document of the served routes as JSON text, built by the server from its route table (once, when first asked for). */
  readonly openApi: () => string;
  /** The caller's token when tokens are configured (undefined on an open gateway). */
  readonly principal?: Principal;
}

/** Per-request facts a handler can report for the access log. */
export interface RequestInfo {
  route: string;
  rows: number;
  /** The caller's token name, once authenticated. */
  token: string | undefined;
  /** The instance and table the route names, when it names them. */
  instance: string | undefined;
  table: string | undefined;
  /** Set by a streamed scan (metrics of scans). */
  scan?: boolean;
}

export type Params = Record<string, string | undefined>;

/**
 * A route's handler. It may answer synchronously (void) when nothing it needs is awaited: a point
 * read with its layout at hand does (an async handler costs a promise and a microtask a request).
 */
export type Handler = (ctx: AppContext, req: IncomingMessage, res: ServerResponse, params: Params, query: Query, info: RequestInfo) => Promise<void> | void;

/**
 * Instances clients may see: all when the configuration lists none, else those listed
 * (docs/configuration.md, "The configuration file"); with tokens, only those the caller's token may read.
 */
export async function visibleInstances(ctx: AppContext): Promise<string[]> {
  const all = await ctx.store.listInstances();
  const allowed = ctx.config.instances;
  const principal = ctx.principal;
  return all.filter((name) => (allowed === undefined || allowed.includes(name)) && (principal === undefined || principal.can(name, 'read')));
}

export function requireVisible(ctx: AppContext, instance: string): void {
  const allowed = ctx.config.instances;
  if (allowed !== undefined && !allowed.includes(instance)) throw rgError('RG_ERR_INSTANCE_NOT_FOUND', `instance ${instance} not found`);
}

/**
 * The layout of a visible table (404 for an unknown or invisible instance or table): at once
 * where the store has it at hand (Store.layoutNow), else its promise. Callers await it, or use it
 * at once when it is no promise (GET rows: a point read without a promise).
 */
export function tableLayout(ctx: AppContext, params: Params): TableLayout | Promise<TableLayout> {
  const instance = params.instance!;
  requireVisible(ctx, instance);
  const store = ctx.store;
  return store.layoutNow !== undefined ? store.layoutNow(instance, params.table!) : store.getLayout(instance, params.table!);
}
