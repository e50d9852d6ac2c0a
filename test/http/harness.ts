/**
 * Starts a real gateway on 127.0.0.1 (random port) over a fresh LMDB store (or a given one), with the fixture
 * tables of the original's tests: `sample_table` (one LONG component) and `players` (two STRINGs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildConfig, type Config } from '../../lib/config/config.js';
import { createGateway, type Gateway } from '../../lib/http/server.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { Store } from '../../lib/store/store.js';

export const SAMPLE_LAYOUT = `{
  name: "sample_table",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "id", type: "LONG"}]},
  locality_groups: [{
    name: "default", in_memory: false, max_versions: 10, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [
      {name: "group_family", columns: [
        {name: "string_qualifier", column_schema: {storage: "UID", type: "INLINE", value: '"string"'}},
        {name: "long_qualifier", column_schema: {storage: "UID", type: "INLINE", value: '"long"'}},
        {name: "union_qualifier", column_schema: {storage: "UID", type: "INLINE", value: '["string", "null"]'}},
        {name: "inline_record", column_schema: {storage: "UID", type: "INLINE",
          value: '{"type": "record", "name": "Rec", "fields": [{"name": "username", "type": "string"}, {"name": "num_purchases", "type": "long"}, {"name": "nick", "type": ["null", "string"], "default": null}]}'}},
        {name: "counter", column_schema: {type: "COUNTER", storage: "FINAL"}}
      ]},
      {name: "strings", map_schema: {storage: "UID", type: "INLINE", value: '"string"'}},
      {name: "longs", map_schema: {storage: "UID", type: "INLINE", value: '"long"'}}
    ]
  }],
  version: "layout-1.3.0"
}`;

export const PLAYERS_LAYOUT = `{
  name: "players",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "name", type: "STRING"}, {name: "domain", type: "STRING"}]},
  locality_groups: [{
    name: "default", in_memory: false, max_versions: 3, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "info", columns: [
      {name: "email", column_schema: {storage: "UID", type: "INLINE", value: '"string"'}},
      {name: "logins", column_schema: {type: "COUNTER", storage: "FINAL"}}
    ]}]
  }],
  version: "layout-1.3.0"
}`;

/** A RAW-key table `raw_table` (map family `info` of strings), for row keys of any bytes. */
export const RAW_TABLE_LAYOUT = {
  name: 'raw_table',
  keys_format: { encoding: 'RAW' },
  locality_groups: [
    {
      name: 'default',
      in_memory: false,
      max_versions: 5,
      ttl_seconds: 2147483647,
      compression_type: 'NONE',
      families: [{ name: 'info', map_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } }],
    },
  ],
  version: 'layout-1.0.0',
};

/** The info routes' GET paths, down to the fixture table sample_table. */
export const INFO_PATHS: readonly string[] = [
  '/v1',
  '/v1/version',
  '/v1/openapi.json',
  '/v1/instances',
  '/v1/instances/default',
  '/v1/instances/default/tables',
  '/v1/instances/default/tables/sample_table',
];

export interface Harness {
  readonly base: string;
  readonly store: Store;
  readonly gateway: Gateway;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /**
   * Serve this store (e.g. a Bigtable store) instead of a fresh LMDB one. The fixture instances and
   * tables are created in it; the harness closes it.
   */
  readonly store?: Store;
}

export async function startGateway(file: Record<string, unknown> = {}, options: GatewayOptions = {}): Promise<Harness> {
  const dir = options.store ? undefined : mkdtempSync(join(tmpdir(), 'rowgate-http-'));
  const store = options.store ?? new LmdbStore({ path: dir! });
  await store.createInstance('default');
  await store.createInstance('hidden');
  await store.createTable('default', parseLayout(SAMPLE_LAYOUT));
  await store.createTable('default', parseLayout(PLAYERS_LAYOUT));
  const config: Config = buildConfig({ port: 0, host: '127.0.0.1', ...file });
  const gateway = createGateway(config, store, pino({ level: 'silent' }));
  const address = await gateway.listen();
  return {
    base: `http://127.0.0.1:${address.port}`,
    store,
    gateway,
    close: async () => {
      await gateway.close();
      await store.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET whose body is kept as bytes, with its content type and trailers, over a real socket. */
export function getBytes(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; type: string | undefined; body: Buffer; trailers: Record<string, string | undefined> }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: Buffer.concat(chunks), trailers: res.trailers }));
    })
      .on('error', reject)
      .end();
  });
}

/** A request with the exact path given (no URL normalization), over a real socket. */
export function raw(base: string, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

export const json = { 'content-type': 'application/json' };

/** Splits a row stream body into parsed rows, checking the CR LF framing on the way. */
export function rowsOf(body: string): unknown[] {
  if (body === '') return [];
  if (!body.endsWith('\r\n')) throw new Error(`row stream does not end with CR LF: ${JSON.stringify(body.slice(-20))}`);
  return body
    .slice(0, -2)
    .split('\r\n')
    .map((line) => JSON.parse(line) as unknown);
}

/**
 * One more gateway over the store of a running harness (e.g. another revision over the same rows,
 * without writing them again). No fixtures are created; closing it leaves the store open.
 */
export async function startGatewayOver(store: Store, file: Record<string, unknown> = {}): Promise<Harness> {
  const config: Config = buildConfig({ port: 0, host: '127.0.0.1', ...file });
  const gateway = createGateway(config, store, pino({ level: 'silent' }));
  const address = await gateway.listen();
  return { base: `http://127.0.0.1:${address.port}`, store, gateway, close: () => gateway.close() };
}

/**
 * Writes `count` rows of sample_table (ids `first` ..), each one cell strings:q holding `chars`
 * copies of `char`: filler for scans larger than the socket buffers. 50,000 rows a transaction.
 */
export async function writeFillerRows(store: Store, count: number, chars: number, options: { first?: number; char?: string } = {}): Promise<void> {
  const first = options.first ?? 0;
  const layout = await store.getLayout('default', 'sample_table');
  const json = JSON.stringify((options.char ?? 'v').repeat(chars));
  for (let start = first; start < first + count; start += 50_000) {
    const rows: RowWrite[] = [];
    for (let i = start; i < Math.min(start + 50_000, first + count); i++) {
      rows.push({
        rowKey: encodeRowKey(layout.keyFormat, [BigInt(i)]),
        cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json }],
      });
    }
    await store.write('default', 'sample_table', rows);
  }
}
