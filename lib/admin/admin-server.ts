/**
 * The admin listener (configuration `admin`, default port 8081 like the original's admin port):
 * plain HTTP, no tokens, meant for probes and scrapers on a private network.
 *
 *   GET /healthz      200 while the process is up
 *   GET /readyz       200 when the store answers listInstances() within admin.readyTimeoutMs, else 503
 *   GET /metrics      Prometheus text format (prom-client); JSON for a client accepting application/json
 *
 * and KijiREST's Dropwizard endpoints (dropwizard.ts): GET /ping, GET /healthcheck,
 * POST /tasks/close?instance=I[&table=T].
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AdminConfig } from '../config/config.js';
import { rgError, type RowgateError } from '../errors.js';
import { serialize } from '../http/serializers.js';
import type { GatewayMetrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import { acceptsJson, closeTask, healthcheckReply, PONG, type AdminReply } from './dropwizard.js';

export interface AdminServer {
  readonly server: Server;
  listen(): Promise<AddressInfo>;
  close(): Promise<void>;
}

export interface AdminTargets {
  readonly store: Store;
  readonly metrics: GatewayMetrics;
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(bytes.length), 'cache-control': 'no-store' });
  res.end(bytes);
}

const sendJson = (res: ServerResponse, status: number, body: unknown): void => send(res, status, 'application/json', JSON.stringify(body));
const reply = (res: ServerResponse, r: AdminReply): void => send(res, r.status, r.contentType, r.body);
/** Errors in the API's coded body (docs/errors.md), so one client reads both listeners' errors. */
const sendError = (res: ServerResponse, err: RowgateError): void => send(res, err.status, 'application/json', serialize.error(err.toBody()));

/** The admin resources and their methods (HEAD wherever GET is). */
const METHODS: Record<string, readonly string[]> = {
  '/healthz': ['GET', 'HEAD'],
  '/readyz': ['GET', 'HEAD'],
  '/metrics': ['GET', 'HEAD'],
  '/ping': ['GET', 'HEAD'],
  '/healthcheck': ['GET', 'HEAD'],
  '/tasks/close': ['POST'],
};

/** Resolves with the store's answer or rejects after `ms`. */
async function probeStore(store: Store, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([store.listInstances(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function createAdminServer(config: AdminConfig, targets: AdminTargets, log: Logger): AdminServer {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = (q < 0 ? url : url.slice(0, q)).replace(/\/+$/, '') || '/';
    const methods = METHODS[path];
    if (methods === undefined) return sendError(res, rgError('RG_ERR_ROUTE_NOT_FOUND', `no admin resource ${path} (try ${Object.keys(METHODS).join(', ')})`));
    if (!methods.includes(req.method ?? '')) {
      res.setHeader('allow', methods.join(', '));
      return sendError(res, rgError('RG_ERR_METHOD_NOT_ALLOWED', `method ${req.method} is not allowed on ${path} (allowed: ${methods.join(', ')})`));
    }
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok', uptimeSeconds: Math.round(process.uptime()) });
    if (path === '/readyz') {
      try {
        await probeStore(targets.store, config.readyTimeoutMs);
        return sendJson(res, 200, { status: 'ready', store: targets.store.kind });
      } catch (e) {
        log.warn({ err: e }, 'readiness check failed');
        return sendJson(res, 503, { status: 'unavailable', store: targets.store.kind, error: (e as Error).message });
      }
    }
    if (path === '/ping') return reply(res, PONG);
    if (path === '/healthcheck') {
      // The readiness probe under Dropwizard's name for it: the store answers in time.
      let store: { healthy: boolean; message?: string } = { healthy: true };
      try {
        await probeStore(targets.store, config.readyTimeoutMs);
      } catch (e) {
        log.warn({ err: e }, 'health check failed');
        store = { healthy: false, message: (e as Error).message };
      }
      return reply(res, healthcheckReply({ store }, acceptsJson(req)));
    }
    if (path === '/tasks/close') {
      const result = await closeTask(targets.store, q < 0 ? '' : url.slice(q + 1));
      if (result.status === 200) log.info({ url }, 'admin task close: store caches dropped');
      return reply(res, result);
    }
    if (acceptsJson(req)) return sendJson(res, 200, await targets.metrics.json());
    const { contentType, body } = await targets.metrics.text();
    send(res, 200, contentType, body);
  };

  const server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    handle(req, res).catch((e: unknown) => {
      log.error({ err: e, url: req.url }, 'admin request failed');
      if (!res.headersSent) sendError(res, rgError('RG_ERR_INTERNAL', 'internal error (logged by the server)', e));
      else res.destroy();
    });
  });

  return {
    server,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
