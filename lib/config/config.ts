/**
 * Server configuration: defaults, the YAML file, the environment (config/config-env.ts) and command-line
 * flags; flags > environment > file > defaults. Every value is checked at startup; an invalid one
 * is refused with a message naming its key. Relative paths in the file (store.path, data,
 * tls.cert, tls.key) are relative to the file's folder, so a configuration means the same files
 * from whichever directory the server starts; paths given as flags or in the environment are
 * relative to the working directory, as command-line paths are.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { LOG_LEVELS, withEnvironment, type ConfigFlags, type Environment } from './config-env.js';
import { rgError } from '../errors.js';

export type Revision = 1 | 2 | 3;

/**
 * yaml's parser, loaded with the first configuration file: its 73 modules were ~15 ms of the start
 * of every command, most of which read no file (`rowgate export --limit 1`: 239 ms median against
 * 224 ms without them or cli-progress's, 15 runs each).
 */
function parseYaml(text: string): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
}

export type StoreConfig =
  | { readonly kind: 'lmdb'; readonly path: string; /** Threads for one large scan (0/1 = none; default: cores, at most 4). */ readonly scanThreads?: number }
  | { readonly kind: 'bigtable'; readonly projectId: string; readonly instanceId: string; readonly tablePrefix: string; readonly metrics?: boolean };

export interface Limits {
  /** Largest request body accepted (413 beyond). 64 MiB: a 100,000-row bulk POST fits. */
  readonly bodyBytes: number;
  /**
   * Longest request URL accepted (414 beyond); 16 KiB covers a bulk get of ~300 entity ids. Must be
   * below maxHeaderBytes; when not set, at most half of it.
   */
  readonly urlBytes: number;
  /** Largest `limit` a scan may ask for (besides -1 = all). */
  readonly maxLimit: number;
  /** Most entity ids in one `eids` bulk get or DELETE. */
  readonly maxEids: number;
  /**
   * Most cells in one POST body (413 beyond). A body is validated whole before it is written, so
   * its rows wait in memory and are written by one transaction, which holds the embedded store's
   * write lock all along (1.4-2.3 s for 150,000 small cells) and raises RSS by 330-580 bytes a
   * small cell; rows with increments, and every row on Bigtable, wait as objects (~440 bytes a
   * small row). 1,000,000 cells is a body of ~60 MB of the smallest rows, about bodyBytes.
   */
  readonly maxPostCells: number;
  /** Scans running at once (503 beyond). */
  readonly maxScans: number;
  /**
   * Bytes of POST bodies a process holds at once, from their first byte read to their commit (503
   * beyond, lib/http/write-budget.ts). A body's rows cost about 10x its bytes of resident memory
   * while they wait and are written (a 9.5 MB POST of 150,000 small rows raised RSS by ~95 MB), so
   * 16 MiB bounds concurrent POSTs to ~160-200 MB on a small machine. One POST alone is always
   * taken, up to bodyBytes.
   */
  readonly writeBudgetBytes: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /**
   * A streamed response whose client has taken no byte for this long while output waits is dropped:
   * backpressure would otherwise let a client that stops reading hold a maxScans slot forever.
   */
  readonly stallTimeoutMs: number;
  /**
   * Largest request head (request line + headers) accepted; node answers 431 beyond it. 32 KiB, twice
   * urlBytes, so a long URL meets the coded 414 (with a JSON body) before node's bare 431.
   */
  readonly maxHeaderBytes: number;
  /** How long SIGTERM waits for running requests before closing them. */
  readonly shutdownGraceMs: number;
}

/** Scope of a token on an instance: read (GET), write (POST/PUT/DELETE) or both. */
export type Scope = 'read' | 'write' | '*';

export interface TokenConfig {
  /** Shown in logs; never the token itself. */
  readonly name: string;
  /** SHA-256 of the token, as 64 lowercase hex digits. */
  readonly sha256: string;
  /** Instance name (or '*' for every instance) -> what the token may do there. */
  readonly scopes: Readonly<Record<string, Scope>>;
}

export interface AuthConfig {
  readonly tokens: readonly TokenConfig[];
}

/** The parsed `auth` section: tokens, or open (absent, or `required: false` to say so on purpose). */
interface ParsedAuth {
  readonly auth?: AuthConfig;
  readonly openByChoice: boolean;
}

/** `cors: true` = any origin without credentials; an allow-list echoes only listed origins. */
export type CorsConfig = false | true | { readonly origins: readonly string[]; readonly credentials: boolean };

export interface TlsConfig {
  readonly cert: string;
  readonly key: string;
}

export interface AdminConfig {
  readonly host: string;
  readonly port: number;
  /** How long /readyz waits for the store. */
  readonly readyTimeoutMs: number;
}

/** The admin port of the default configuration: the main port + 1 (see defaultAdminPort). */
export const DEFAULT_ADMIN_PORT = 8081;

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly revision: Revision;
  /** Visible instances: undefined = all, [] = none (docs/configuration.md, "The configuration file"). */
  readonly instances?: readonly string[];
  readonly cors: CorsConfig;
  /** Bearer tokens; undefined = the gateway is open (and says so at startup). */
  readonly auth?: AuthConfig;
  /**
   * The file says `auth: {required: false}`: open on purpose. A reload may drop the tokens of a
   * running gateway only then (config/config-reload.ts), so a lost auth section cannot open it.
   */
  readonly authOptional?: boolean;
  /** Serve HTTPS with these PEM files. */
  readonly tls?: TlsConfig;
  /** Refuse every write with 403. */
  readonly readOnly: boolean;
  /** The admin listener (/healthz, /readyz, /metrics); false = none. */
  readonly admin: AdminConfig | false;
  readonly store: StoreConfig;
  readonly limits: Limits;
  readonly logLevel: string;
  /** Compress responses (gzip or br, streamed) for clients that accept it. */
  readonly compression: boolean;
}

export const DEFAULT_DATA_DIR = './rowgate-data';

export const DEFAULT_LIMITS: Limits = {
  bodyBytes: 64 * 1024 * 1024,
  urlBytes: 16 * 1024,
  maxLimit: 1_000_000_000,
  maxEids: 10_000,
  maxPostCells: 1_000_000,
  maxScans: 64,
  writeBudgetBytes: 16 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 65_000,
  stallTimeoutMs: 60_000,
  maxHeaderBytes: 32 * 1024,
  shutdownGraceMs: 10_000,
};

export const DEFAULT_CONFIG: Config = {
  host: '127.0.0.1',
  port: 8080,
  revision: 3,
  cors: false,
  readOnly: false,
  admin: { host: '127.0.0.1', port: DEFAULT_ADMIN_PORT, readyTimeoutMs: 2000 },
  store: { kind: 'lmdb', path: DEFAULT_DATA_DIR },
  limits: DEFAULT_LIMITS,
  logLevel: 'info',
  compression: false,
};

/** Flags given on the command line (defined with the environment's, which take the same form). */
export type { ConfigFlags };

const TOP_KEYS = new Set([
  'host',
  'port',
  'revision',
  'instances',
  'cors',
  'store',
  'limits',
  'logLevel',
  'data',
  'auth',
  'tls',
  'readOnly',
  'admin',
  'compression',
]);

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

/** A path written in the configuration file, relative to the file's folder (when there is a file). */
function filePath(baseDir: string | undefined, path: string): string {
  return baseDir === undefined ? path : resolve(baseDir, path);
}

function parseStore(raw: unknown, dataFlag: string | undefined, baseDir: string | undefined): StoreConfig {
  if (raw === undefined) return { kind: 'lmdb', path: dataFlag ?? DEFAULT_DATA_DIR };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('store', 'must be a mapping with kind: lmdb or kind: bigtable');
  const s = raw as Record<string, unknown>;
  if (s.kind === 'lmdb') {
    for (const k of Object.keys(s)) if (!['kind', 'path', 'scanThreads'].includes(k)) bad(`store.${k}`, 'unknown key for kind lmdb (use path, scanThreads)');
    if (s.scanThreads !== undefined && !(Number.isInteger(s.scanThreads) && (s.scanThreads as number) >= 0 && (s.scanThreads as number) <= 64)) {
      bad('store.scanThreads', `must be an integer from 0 to 64, got ${JSON.stringify(s.scanThreads)}`);
    }
    return {
      kind: 'lmdb',
      path: dataFlag ?? (s.path === undefined ? DEFAULT_DATA_DIR : filePath(baseDir, text('store.path', s.path))),
      ...(s.scanThreads === undefined ? {} : { scanThreads: s.scanThreads as number }),
    };
  }
  if (s.kind === 'bigtable') {
    for (const k of Object.keys(s))
      if (!['kind', 'projectId', 'instanceId', 'tablePrefix', 'metrics'].includes(k))
        bad(`store.${k}`, 'unknown key for kind bigtable (use projectId, instanceId, tablePrefix, metrics)');
    if (s.metrics !== undefined && typeof s.metrics !== 'boolean') bad('store.metrics', 'must be true or false');
    return {
      kind: 'bigtable',
      projectId: text('store.projectId', s.projectId),
      instanceId: text('store.instanceId', s.instanceId),
      tablePrefix: s.tablePrefix === undefined ? 'rowgate' : text('store.tablePrefix', s.tablePrefix),
      ...(s.metrics === undefined ? {} : { metrics: s.metrics as boolean }),
    };
  }
  return bad('store.kind', `must be lmdb or bigtable, got ${JSON.stringify(s.kind)}`);
}

/**
 * The longest delay node's timers take: a longer one (a `*Ms` limit) becomes 1 ms, with only a
 * TimeoutOverflowWarning to show for it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

function parseLimits(raw: unknown): Limits {
  if (raw === undefined) return DEFAULT_LIMITS;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad('limits', 'must be a mapping');
  const given = raw as Record<string, unknown>;
  const out = { ...DEFAULT_LIMITS } as Record<keyof Limits, number>;
  for (const [k, v] of Object.entries(given)) {
    if (!(k in DEFAULT_LIMITS)) bad(`limits.${k}`, `unknown limit (known: ${Object.keys(DEFAULT_LIMITS).join(', ')})`);
    const n = integer(`limits.${k}`, v, 1, Number.MAX_SAFE_INTEGER);
    if (k.endsWith('Ms') && n > MAX_TIMER_MS) {
      bad(
        `limits.${k}`,
        `must be at most ${MAX_TIMER_MS} (2^31-1 ms, about 24.8 days), got ${n}: node's timers cannot wait longer and would fire after 1 ms instead`,
      );
    }
    out[k as keyof Limits] = n;
  }
  // node:http refuses a headers timeout longer than the request timeout.
  if (out.headersTimeoutMs > out.requestTimeoutMs) bad('limits.headersTimeoutMs', `must not exceed limits.requestTimeoutMs (${out.requestTimeoutMs})`);
  // The URL is part of the request head, which node bounds by maxHeaderBytes with a bare 431: a
  // urlBytes not below it would make the coded 414 unreachable. Left unset, urlBytes follows a
  // lowered maxHeaderBytes (half of it, as the defaults are); set, it must fit.
  if (given.urlBytes === undefined) out.urlBytes = Math.min(DEFAULT_LIMITS.urlBytes, Math.max(1, Math.floor(out.maxHeaderBytes / 2)));
  if (out.urlBytes >= out.maxHeaderBytes) {
    if (given.urlBytes === undefined) bad('limits.maxHeaderBytes', `must be at least 2, got ${out.maxHeaderBytes}: the request head must hold a URL`);
    bad(
      'limits.urlBytes',
      `must be less than limits.maxHeaderBytes (${out.maxHeaderBytes}), got ${out.urlBytes}: the request head holding the URL is limited to maxHeaderBytes, so node would answer a bare 431 before the coded 414 (leave room for the headers: the defaults are 16384 and 32768)`,
    );
  }
  return out;
}

function mapping(key: string, raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) bad(key, 'must be a mapping');
  return raw as Record<string, unknown>;
}

function onlyKeys(key: string, m: Record<string, unknown>, known: readonly string[]): void {
  for (const k of Object.keys(m)) if (!known.includes(k)) bad(`${key}.${k}`, `unknown key (known: ${known.join(', ')})`);
}

const SCOPES: readonly Scope[] = ['read', 'write', '*'];

function parseAuth(raw: unknown): ParsedAuth {
  if (raw === undefined || raw === null) return { openByChoice: false };
  const a = mapping('auth', raw);
  onlyKeys('auth', a, ['required', 'tokens']);
  if (a.required !== undefined && typeof a.required !== 'boolean') bad('auth.required', 'must be true or false');
  if (a.required === false) {
    if (a.tokens !== undefined) bad('auth.required', 'is false (every client is served without a token): remove auth.tokens, or required');
    return { openByChoice: true };
  }
  if (!Array.isArray(a.tokens)) bad('auth.tokens', 'must be a list of {name, sha256, scopes}');
  const names = new Set<string>();
  const digests = new Set<string>();
  const tokens = a.tokens.map((item: unknown, i): TokenConfig => {
    const key = `auth.tokens[${i}]`;
    const t = mapping(key, item);
    onlyKeys(key, t, ['name', 'sha256', 'scopes']);
    const name = text(`${key}.name`, t.name);
    if (names.has(name)) bad(`${key}.name`, `token name ${JSON.stringify(name)} is used twice`);
    names.add(name);
    if (typeof t.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(t.sha256)) {
      bad(`${key}.sha256`, 'must be the SHA-256 of the token as 64 hex digits (tools/rowgate hash-token prints it)');
    }
    const sha256 = t.sha256.toLowerCase();
    if (digests.has(sha256)) bad(`${key}.sha256`, 'the same token is configured twice');
    digests.add(sha256);
    const scopesRaw = mapping(`${key}.scopes`, t.scopes);
    const scopes: Record<string, Scope> = {};
    for (const [instance, scope] of Object.entries(scopesRaw)) {
      if (!SCOPES.includes(scope as Scope)) bad(`${key}.scopes.${instance}`, `must be read, write or '*', got ${JSON.stringify(scope)}`);
      scopes[instance] = scope as Scope;
    }
    return { name, sha256, scopes };
  });
  if (tokens.length === 0) bad('auth.tokens', 'is empty: list at least one token, or remove auth to run an open gateway');
  return { auth: { tokens }, openByChoice: false };
}

const ORIGIN = /^https?:\/\/[^/\s?#]+$/i;

function parseCors(raw: unknown): CorsConfig {
  if (raw === undefined || raw === null) return false;
  if (typeof raw === 'boolean') return raw;
  if (typeof raw !== 'object' || Array.isArray(raw)) bad('cors', 'must be true, false, or a mapping {origins: [...], credentials: true|false}');
  const c = raw as Record<string, unknown>;
  onlyKeys('cors', c, ['origins', 'credentials']);
  if (!Array.isArray(c.origins)) bad('cors.origins', 'must be a list of origins such as https://app.example.com');
  const origins = c.origins.map((o: unknown, i) => {
    if (o === '*') return '*';
    if (typeof o !== 'string' || !ORIGIN.test(o))
      bad(`cors.origins[${i}]`, `must be '*' or an origin (scheme://host[:port], no path), got ${JSON.stringify(o)}`);
    return o.toLowerCase();
  });
  if (c.credentials !== undefined && typeof c.credentials !== 'boolean') bad('cors.credentials', 'must be true or false');
  const credentials = c.credentials === true;
  if (credentials && origins.includes('*')) bad('cors.origins', "'*' cannot be combined with credentials: true (list the origins instead)");
  return { origins, credentials };
}

function parseTls(raw: unknown, baseDir: string | undefined): TlsConfig | undefined {
  if (raw === undefined || raw === null || raw === false) return undefined;
  const t = mapping('tls', raw);
  onlyKeys('tls', t, ['cert', 'key']);
  const out = { cert: filePath(baseDir, text('tls.cert', t.cert)), key: filePath(baseDir, text('tls.key', t.key)) };
  for (const k of ['cert', 'key'] as const) {
    try {
      readFileSync(out[k]);
    } catch (e) {
      bad(`tls.${k}`, `cannot read ${out[k]}: ${(e as Error).message}`);
    }
  }
  return out;
}

/**
 * The admin port when `admin.port` is not set: the main port + 1 (8081 for the default 8080, the
 * original's admin port), so gateways on different ports (and `serve --port 8081`) do not all
 * reach for one admin port. An ephemeral main port (0: tests, parallel runs) gets an ephemeral
 * admin port; 65535 has no next port, so admin.port must then be given.
 */
function defaultAdminPort(port: number): number {
  if (port === 0) return 0;
  if (port === 65535) bad('admin.port', 'has no default when port is 65535 (the default is port + 1): set admin.port, or admin: false');
  return port + 1;
}

function parseAdmin(raw: unknown, host: string, port: number, flagPort: string | number | undefined): AdminConfig | false {
  if (raw === false) {
    if (flagPort !== undefined) bad('admin', 'is false (no admin listener), yet --admin-port or ROWGATE_ADMIN_PORT gives it a port: remove one');
    return false;
  }
  const a = raw === undefined || raw === null || raw === true ? {} : mapping('admin', raw);
  onlyKeys('admin', a, ['host', 'port', 'readyTimeoutMs']);
  const adminHost = a.host === undefined ? host : text('admin.host', a.host);
  const adminPort =
    flagPort !== undefined
      ? integer('--admin-port', flagPort, 0, 65535)
      : a.port === undefined || a.port === null
        ? defaultAdminPort(port)
        : integer('admin.port', a.port, 0, 65535);
  if (adminPort !== 0 && adminPort === port) {
    bad('admin.port', `${adminPort} is the port of the main listener; pick another (or admin: false)`);
  }
  const readyTimeoutMs = integer('admin.readyTimeoutMs', a.readyTimeoutMs ?? 2000, 1, 600_000);
  return { host: adminHost, port: adminPort, readyTimeoutMs };
}

/**
 * Builds the configuration from the flags, the environment and the YAML file named by
 * `--config` or ROWGATE_CONFIG (if any).
 */
export function loadConfig(givenFlags: ConfigFlags = {}, env: Environment = process.env): Config {
  const flags = withEnvironment(givenFlags, env);
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
  return buildConfig(file, flags, flags.config === undefined ? undefined : dirname(resolve(flags.config)));
}

/** `baseDir`: the configuration file's folder, against which relative paths in `file` resolve. */
export function buildConfig(file: Record<string, unknown>, flags: ConfigFlags = {}, baseDir?: string): Config {
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
  if (file.readOnly !== undefined && typeof file.readOnly !== 'boolean') bad('readOnly', 'must be true or false');
  if (file.compression !== undefined && typeof file.compression !== 'boolean') bad('compression', 'must be true or false');
  if (file.logLevel !== undefined && !LOG_LEVELS.includes(String(file.logLevel))) bad('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
  if (flags.logLevel !== undefined && !LOG_LEVELS.includes(flags.logLevel))
    bad('--log-level', `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(flags.logLevel)}`);
  const dataFlag = flags.data ?? (file.data === undefined ? undefined : filePath(baseDir, text('data', file.data)));
  const auth = parseAuth(file.auth);
  return {
    host,
    port,
    revision,
    instances,
    cors: parseCors(file.cors),
    auth: auth.auth,
    ...(auth.openByChoice ? { authOptional: true } : {}),
    tls: parseTls(file.tls, baseDir),
    readOnly: (file.readOnly as boolean | undefined) ?? d.readOnly,
    admin: parseAdmin(file.admin, host, port, flags.adminPort),
    store: parseStore(file.store, dataFlag, baseDir),
    limits: parseLimits(file.limits),
    logLevel: flags.logLevel ?? (file.logLevel as string | undefined) ?? d.logLevel,
    compression: (file.compression as boolean | undefined) ?? d.compression,
  };
}
