/**
 * Server configuration: defaults, the YAML file, and command-line flags (flags win). Every value
 * is checked at startup; an invalid one is refused with a message naming its key.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { rgError } from './errors.js';

export type Revision = 1 | 2 | 3;

export type StoreConfig =
  | { readonly kind: 'lmdb'; readonly path: string }
  | { readonly kind: 'bigtable'; readonly projectId: string; readonly instanceId: string; readonly tablePrefix: string };

export interface Limits {
  /** Largest request body accepted (413 beyond). 64 MiB: a 100,000-row bulk POST fits. */
  readonly bodyBytes: number;
  /** Longest request URL accepted (414 beyond); 16 KiB covers a bulk get of ~300 entity ids. */
  readonly urlBytes: number;
  /** Largest `limit` a scan may ask for (besides -1 = all). */
  readonly maxLimit: number;
  /** Most entity ids in one `eids` bulk get or DELETE. */
  readonly maxEids: number;
  /** Scans running at once (503 beyond). */
  readonly maxScans: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** How long SIGTERM waits for running requests before closing them. */
  readonly shutdownGraceMs: number;
}

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly revision: Revision;
  /** Visible instances: undefined = all, [] = none (DESIGN.md 4.7). */
  readonly instances?: readonly string[];
  readonly cors: boolean;
  readonly store: StoreConfig;
  readonly limits: Limits;
  readonly logLevel: string;
}

export const DEFAULT_DATA_DIR = './rowgate-data';

export const DEFAULT_LIMITS: Limits = {
  bodyBytes: 64 * 1024 * 1024,
  urlBytes: 16 * 1024,
  maxLimit: 1_000_000_000,
  maxEids: 10_000,
  maxScans: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 65_000,
  shutdownGraceMs: 10_000,
};

export const DEFAULT_CONFIG: Config = {
  host: '127.0.0.1',
  port: 8080,
  revision: 3,
  cors: false,
  store: { kind: 'lmdb', path: DEFAULT_DATA_DIR },
  limits: DEFAULT_LIMITS,
  logLevel: 'info',
};

/** Flags given on the command line; undefined = not given. */
export interface ConfigFlags {
  readonly config?: string;
  readonly data?: string;
  readonly port?: string | number;
  readonly host?: string;
  readonly revision?: string | number;
}

const TOP_KEYS = new Set(['host', 'port', 'revision', 'instances', 'cors', 'store', 'limits', 'logLevel', 'data']);

function bad(key: string, message: string): never {
  throw rgError('RG_ERR_BAD_CONFIG', `configuration ${key}: ${message}`);
}

function integer(key: string, value: unknown, min: number, max: number): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) bad(key, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

function text(key: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') bad(key, `must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

function parseStore(raw: unknown, dataFlag: string | undefined): StoreConfig {
  if (raw === undefined) return { kind: 'lmdb', path: dataFlag ?? DEFAULT_DATA_DIR };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('store', 'must be a mapping with kind: lmdb or kind: bigtable');
  const s = raw as Record<string, unknown>;
  if (s.kind === 'lmdb') {
    for (const k of Object.keys(s)) if (k !== 'kind' && k !== 'path') bad(`store.${k}`, 'unknown key for kind lmdb (use path)');
    return { kind: 'lmdb', path: dataFlag ?? (s.path === undefined ? DEFAULT_DATA_DIR : text('store.path', s.path)) };
  }
  if (s.kind === 'bigtable') {
    for (const k of Object.keys(s)) if (!['kind', 'projectId', 'instanceId', 'tablePrefix'].includes(k)) bad(`store.${k}`, 'unknown key for kind bigtable (use projectId, instanceId, tablePrefix)');
    return {
      kind: 'bigtable',
      projectId: text('store.projectId', s.projectId),
      instanceId: text('store.instanceId', s.instanceId),
      tablePrefix: s.tablePrefix === undefined ? 'rowgate' : text('store.tablePrefix', s.tablePrefix),
    };
  }
  return bad('store.kind', `must be lmdb or bigtable, got ${JSON.stringify(s.kind)}`);
}

function parseLimits(raw: unknown): Limits {
  if (raw === undefined) return DEFAULT_LIMITS;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('limits', 'must be a mapping');
  const out: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (!(k in DEFAULT_LIMITS)) bad(`limits.${k}`, `unknown limit (known: ${Object.keys(DEFAULT_LIMITS).join(', ')})`);
    out[k] = integer(`limits.${k}`, v, 1, Number.MAX_SAFE_INTEGER);
  }
  return out as unknown as Limits;
}

/** Builds the configuration from the YAML file named by `flags.config` (if any) and the flags. */
export function loadConfig(flags: ConfigFlags = {}): Config {
  let file: Record<string, unknown> = {};
  if (flags.config !== undefined) {
    let textContent: string;
    try {
      textContent = readFileSync(flags.config, 'utf8');
    } catch (e) {
      return bad('file', `cannot read ${flags.config}: ${(e as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = parseYaml(textContent);
    } catch (e) {
      return bad('file', `${flags.config} is not valid YAML: ${(e as Error).message}`);
    }
    if (parsed !== null && parsed !== undefined) {
      if (typeof parsed !== 'object' || Array.isArray(parsed)) bad('file', `${flags.config} must hold a mapping of keys`);
      file = parsed as Record<string, unknown>;
    }
  }
  return buildConfig(file, flags);
}

export function buildConfig(file: Record<string, unknown>, flags: ConfigFlags = {}): Config {
  for (const k of Object.keys(file)) if (!TOP_KEYS.has(k)) bad(k, `unknown key (known: ${[...TOP_KEYS].join(', ')})`);
  const d = DEFAULT_CONFIG;
  const host = flags.host ?? (file.host === undefined ? d.host : text('host', file.host));
  const port = integer('port', flags.port ?? file.port ?? d.port, 0, 65535);
  const revision = integer('revision', flags.revision ?? file.revision ?? d.revision, 1, 3) as Revision;
  let instances: string[] | undefined;
  if (file.instances !== undefined && file.instances !== null) {
    if (!Array.isArray(file.instances)) bad('instances', 'must be a list of instance names');
    instances = file.instances.map((v, i) => text(`instances[${i}]`, v));
  }
  if (file.cors !== undefined && typeof file.cors !== 'boolean') bad('cors', 'must be true or false');
  if (file.logLevel !== undefined && !['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(String(file.logLevel))) {
    bad('logLevel', 'must be one of fatal, error, warn, info, debug, trace, silent');
  }
  const dataFlag = flags.data ?? (file.data === undefined ? undefined : text('data', file.data));
  return {
    host,
    port,
    revision,
    instances,
    cors: (file.cors as boolean | undefined) ?? d.cors,
    store: parseStore(file.store, dataFlag),
    limits: parseLimits(file.limits),
    logLevel: (file.logLevel as string | undefined) ?? d.logLevel,
  };
}
