/**
 * A gateway checked in process: each request goes to the gateway's own request listener through
 * light-my-request (fastify's injector: a request and a response object, no socket), over a fresh
 * LMDB store with the fixture tables. For HTTP behaviour that does not depend on a socket (routing,
 * parameter checks, status, headers, bodies, trailers, the row documents), so those tests run in
 * the unit layer (`npm run test:unit`, issue #31); test/http/ keeps real sockets for backpressure,
 * stalls, keep-alive, TLS, compression and the parser's errors. The same gateway code runs: the
 * injector only replaces node's HTTP parser and the socket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import inject from 'light-my-request';
import { pino } from 'pino';
import { buildConfig } from '../../lib/config/config.js';
import { createGateway, type Gateway } from '../../lib/http/server.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { Store } from '../../lib/store/store.js';
import { createFixtures, type RawResponse } from './fixture-tables.js';

export interface InjectedResponse extends RawResponse {
  /** The body's bytes (`body` is them as UTF-8). */
  readonly bytes: Buffer;
  readonly trailers: Record<string, string>;
}

export interface InProcessGateway {
  readonly store: Store;
  readonly gateway: Gateway;
  /** A request with the exact path given (query included), answered without a socket. */
  raw(method: string, path: string, body?: string | Buffer, headers?: Record<string, string>): Promise<InjectedResponse>;
  close(): Promise<void>;
}

/** A gateway over a fresh LMDB store holding the fixture tables; `file` is the configuration file's content. */
export async function startInProcess(file: Record<string, unknown> = {}): Promise<InProcessGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-inprocess-'));
  const store = new LmdbStore({ path: dir });
  await createFixtures(store);
  const h = inProcessGateway(store, file);
  return {
    ...h,
    close: async () => {
      await h.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A gateway over a store a test already holds (no fixtures are created); closing it leaves the store open. */
export function inProcessGateway(store: Store, file: Record<string, unknown> = {}): InProcessGateway {
  const gateway = createGateway(buildConfig({ port: 0, host: '127.0.0.1', ...file }), store, pino({ level: 'silent' }));
  // The listener createGateway gave its server: the one node's HTTP parser would call.
  const [listener] = gateway.server.listeners('request') as RequestListener[];
  if (listener === undefined) throw new Error('the gateway has no request listener');
  return {
    store,
    gateway,
    raw: async (method, path, body, headers = {}) => {
      const r = await inject(listener, {
        method: method as 'GET',
        url: path,
        headers: { host: '127.0.0.1', ...headers },
        remoteAddress: '127.0.0.1',
        ...(body === undefined ? {} : { payload: body }),
      });
      // node's ServerResponse sends no body for HEAD whatever the handler writes; the injector
      // captures writes before that rule, so it is applied here.
      const bytes = method === 'HEAD' ? Buffer.alloc(0) : r.rawPayload;
      return { status: r.statusCode, headers: r.headers as RawResponse['headers'], body: bytes.toString('utf8'), bytes, trailers: r.trailers };
    },
    close: () => gateway.close(),
  };
}
