/**
 * Starts a real gateway on 127.0.0.1 (random port) over a fresh LMDB store (or a given one), with the fixture
 * tables (test/support/fixture-tables.ts). For behaviour that does not need a socket,
 * test/support/in-process.ts checks the same gateway without one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildConfig, type Config } from '../../lib/config/config.js';
import { createGateway, type Gateway } from '../../lib/http/server.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { Store } from '../../lib/store/store.js';
import { createFixtures, type RawResponse } from '../support/fixture-tables.js';

export { INFO_PATHS, PLAYERS_LAYOUT, RAW_TABLE_LAYOUT, SAMPLE_LAYOUT, createFixtures, json, rowsOf, type RawResponse } from '../support/fixture-tables.js';

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
  await createFixtures(store);
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

/** A GET whose client goes away once the first bytes of the answer arrive (a reader that hangs up mid-stream). */
export function leaveAfterFirstBytes(base: string, path: string, headers: Record<string, string>): Promise<void> {
  const url = new URL(base);
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
    req.end();
  });
}

/** Waits (up to 5 s) until the LMDB store has no scan open and no part queued on its scan threads. */
export async function scansSettled(store: LmdbStore): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((store.openScans > 0 || (store.scanPool?.busy ?? 0) > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}
