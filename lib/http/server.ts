/**
 * The gateway: node:http with find-my-way routing, no framework. Picks the route table of the
 * configured revision, turns every thrown error into its coded JSON response, logs one line per
 * request, and shuts down gracefully.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { rgError, type RowgateError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { AppContext, Handler, RequestInfo } from './context.js';
import { parseQuery } from './query.js';
import { asRowgateError, sendError } from './respond.js';
import { routesFor } from './routes.js';

export interface Gateway {
  readonly server: Server;
  readonly context: AppContext;
  /** Starts listening; resolves with the bound address. */
  listen(): Promise<AddressInfo>;
  /** Stops accepting, lets running requests finish for `limits.shutdownGraceMs`, then closes the rest. */
  close(): Promise<void>;
}

interface RouteStore {
  readonly template: string;
  readonly handler: Handler;
}

const ROUTED_METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'DELETE'];

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET,POST,PUT,DELETE,OPTIONS',
  'access-control-allow-headers': 'Content-Type,Accept,Authorization,X-Requested-With,Origin',
  'access-control-max-age': '1800',
};

export function createGateway(config: Config, store: Store, log: Logger): Gateway {
  const context: AppContext = { config, store, log, activeScans: 0 };
  const router = FindMyWay<FindMyWay.HTTPVersion.V1>({ ignoreTrailingSlash: true, maxParamLength: 4096 });
  for (const route of routesFor(config.revision)) {
    const storeData: RouteStore = { template: route.path, handler: route.handler };
    router.on(route.method as HTTPMethod, route.path, () => undefined, storeData);
  }
  const allowedMethods = (path: string): string[] => ROUTED_METHODS.filter((m) => router.find(m, path) !== null);

  const handle = async (req: IncomingMessage, res: ServerResponse, info: RequestInfo): Promise<void> => {
    const url = req.url ?? '/';
    if (url.length > config.limits.urlBytes) throw rgError('RG_ERR_URL_TOO_LONG', `request URL of ${url.length} bytes exceeds the limit of ${config.limits.urlBytes}`);
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (config.cors) for (const [k, v] of Object.entries(CORS_HEADERS)) res.setHeader(k, v);
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS' && config.cors) {
      res.writeHead(204);
      res.end();
      return;
    }
    const found = router.find(method as HTTPMethod, path);
    if (!found) {
      const allowed = allowedMethods(path);
      if (allowed.length > 0) {
        res.setHeader('allow', allowed.join(', '));
        throw rgError('RG_ERR_METHOD_NOT_ALLOWED', `method ${method} is not allowed on ${path} (allowed: ${allowed.join(', ')})`);
      }
      throw rgError('RG_ERR_ROUTE_NOT_FOUND', `no route for ${path} in revision ${config.revision} of the interface`);
    }
    const route = found.store as RouteStore;
    info.route = route.template;
    const query = parseQuery(q < 0 ? '' : url.slice(q + 1));
    await route.handler(context, req, res, found.params, query, info);
  };

  const server = createServer({ requestTimeout: config.limits.requestTimeoutMs, headersTimeout: config.limits.headersTimeoutMs }, (req, res) => {
    const started = process.hrtime.bigint();
    const info: RequestInfo = { route: '-', rows: 0 };
    res.on('close', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.info({ method: req.method, route: info.route, status: res.statusCode, ms: Math.round(ms * 100) / 100, rows: info.rows, aborted: !res.writableFinished }, 'request');
    });
    handle(req, res, info).catch((e: unknown) => {
      const err: RowgateError = asRowgateError(e);
      if (err.code === 'RG_ERR_INTERNAL') log.error({ err: e, url: req.url }, 'internal error');
      const headers: Record<string, string> = {};
      const retryAfter = (e as { retryAfter?: number }).retryAfter;
      if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
      sendError(req, res, err, headers);
    });
  });
  server.keepAliveTimeout = config.limits.keepAliveTimeoutMs;

  return {
    server,
    context,
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
        const force = setTimeout(() => server.closeAllConnections(), config.limits.shutdownGraceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
