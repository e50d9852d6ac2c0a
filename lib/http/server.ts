/**
 * The gateway: node:http (or node:https with `tls`) and find-my-way routing, no framework. Picks
 * the route table of the configured revision, checks access (bearer tokens, read-only mode) before
 * any handler runs, turns every thrown error into its coded JSON response, logs one line and
 * records metrics per request, and shuts down gracefully.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { isRowgateError, rgError, type RowgateError } from '../errors.js';
import { GatewayMetrics, instrumentStore, UNMATCHED_ROUTE, type AuthFailureReason } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import { accessOf, Authenticator, requireScope, type Principal } from './auth.js';
import type { AppContext, Handler, RequestInfo } from './context.js';
import { createCors } from './cors.js';
import { allowOnly, parseQuery, type QueryParams } from './query.js';
import { answerClientError, answerConnect, type ParserError } from './client-error.js';
import { BODY_BYTES, type BodyCounted } from './body.js';
import { asRowgateError, sendError } from './respond.js';
import { requestIdOf, RequestLog } from './request-log.js';
import { GatewayResponse } from './gateway-response.js';
import { ScanSlots } from './scan-slots.js';
import { openApiText } from './openapi.js';
import { routesFor } from './routes.js';

export interface Gateway {
  readonly server: Server | HttpsServer;
  readonly context: AppContext;
  readonly metrics: GatewayMetrics;
  /** 'https' when `tls` is configured. */
  readonly protocol: 'http' | 'https';
  /** Starts listening; resolves with the bound address. */
  listen(): Promise<AddressInfo>;
  /** Stops accepting, lets running requests finish for `limits.shutdownGraceMs`, then closes the rest. */
  close(): Promise<void>;
  /**
   * Runs with `next` from now on (config/config-reload.ts planReload keeps its restart-only settings
   * those of the running gateway): tokens, read-only, CORS, limits, log level. Requests running
   * finish under the configuration they started with; no connection is closed.
   */
  reload(next: Config): void;
}

interface RouteStore {
  readonly template: string;
  readonly handler: Handler;
  /** The query parameters the route takes, checked before its handler runs (undefined: the handler checks them). */
  readonly query: QueryParams | undefined;
}

const ROUTED_METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];

/**
 * How often node checks headersTimeout/requestTimeout: they act only at these checks (default
 * 30 s), so a slow sender would otherwise outlive a short timeout by up to that much.
 */
export function checkingIntervalMs(config: Config): number {
  const shortest = Math.min(config.limits.headersTimeoutMs, config.limits.requestTimeoutMs);
  return Math.max(25, Math.min(1000, Math.floor(shortest / 10)));
}

function readPem(key: 'cert' | 'key', path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw rgError('RG_ERR_BAD_CONFIG', `configuration tls.${key}: cannot read ${path}: ${(e as Error).message}`);
  }
}

export function createGateway(config: Config, rawStore: Store, log: Logger): Gateway {
  const metrics = new GatewayMetrics(
    () => context.scans.active,
    () => rawStore.openScans,
  );
  // Handlers see the store through the proxy that counts store errors.
  const store = instrumentStore(rawStore, metrics);
  // The revision is a restart-only setting (config/config-reload.ts): the routes are those of the first configuration.
  const revision = config.revision;
  const routes = routesFor(revision);
  let openApiDocument: string | undefined;
  const openApi = (): string => (openApiDocument ??= openApiText(revision, routes));
  const context: AppContext = { config, store, log, scans: new ScanSlots(), openApi };
  const requestLog = new RequestLog(log);
  let authenticator = config.auth === undefined ? undefined : new Authenticator(config.auth);
  let cors = createCors(config.cors, config.readOnly);
  const router = FindMyWay<FindMyWay.HTTPVersion.V1>({ ignoreTrailingSlash: true, maxParamLength: 4096 });
  for (const route of routes) {
    const storeData: RouteStore = { template: route.path, handler: route.handler, query: route.query.handlerChecks ? undefined : route.query };
    router.on(route.method as HTTPMethod, route.path, () => undefined, storeData);
    // RFC 9110 9.3.2: HEAD wherever GET is served, by the GET handler: the same status and
    // headers, and node sends no body for it (a scan is not even run: rows-read.ts).
    if (route.method === 'GET') router.on('HEAD', route.path, () => undefined, storeData);
  }
  const allowedMethods = (path: string): string[] => ROUTED_METHODS.filter((m) => router.find(m, path) !== null);

  /** The context a handler sees: the shared one, or (with tokens) one that knows the caller. */
  const contextFor = (principal: Principal | undefined): AppContext => (principal === undefined ? context : { ...context, principal });

  /**
   * Routes and checks the request, then runs its handler: what it throws before the handler runs
   * is thrown here, the handler's failure is its promise's. Not an async function: that was one
   * more promise and microtask a request (a point read runs to its write without waiting).
   */
  const handle = (req: IncomingMessage, res: ServerResponse, info: RequestInfo): Promise<void> | void => {
    // RFC 9112 3.2, closing the connection as node does (its own check is off: its 400 has no body).
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      res.shouldKeepAlive = false;
      throw rgError('RG_ERR_BAD_HTTP_REQUEST', 'an HTTP/1.1 request must carry a Host header (RFC 9112 3.2)');
    }
    const url = req.url ?? '/';
    if (url.length > config.limits.urlBytes)
      throw rgError('RG_ERR_URL_TOO_LONG', `request URL of ${url.length} bytes exceeds the limit of ${config.limits.urlBytes}`);
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    if (cors !== undefined) {
      if (method === 'OPTIONS') return cors.preflight(req, res);
      cors.apply(req, res);
    }
    const found = router.find(method as HTTPMethod, path);
    if (found) {
      info.route = (found.store as RouteStore).template;
      info.instance = found.params.instance;
      info.table = found.params.table;
    }
    // Authentication comes first: without a valid token not even the route table is revealed.
    const principal = authenticator?.authenticate(req.headers.authorization);
    info.token = principal?.name;
    if (!found) {
      const allowed = allowedMethods(path);
      if (allowed.length > 0) {
        res.setHeader('allow', allowed.join(', '));
        throw rgError('RG_ERR_METHOD_NOT_ALLOWED', `method ${method} is not allowed on ${path} (allowed: ${allowed.join(', ')})`);
      }
      throw rgError('RG_ERR_ROUTE_NOT_FOUND', `no route for ${path} in revision ${config.revision} of the interface`);
    }
    const access = accessOf(method);
    const instance = found.params.instance;
    if (principal !== undefined && instance !== undefined) requireScope(principal, instance, access);
    if (access === 'write' && config.readOnly) {
      throw rgError('RG_ERR_FORBIDDEN', `the gateway is in read-only mode (readOnly: true): ${method} is refused`);
    }
    const route = found.store as RouteStore;
    const query = parseQuery(q < 0 ? '' : url.slice(q + 1));
    // Every parameter must be one the route knows (a typo is a 400 naming it), before the handler looks at any.
    if (route.query !== undefined) allowOnly(query, route.query, revision);
    return route.handler(contextFor(principal), req, res, found.params, query, info);
  };

  /** Set by close(): responses end their connection so that kept-alive clients do not hold up the exit. */
  let closing = false;

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    if (closing) res.shouldKeepAlive = false;
    const socket = req.socket;
    const bytesBefore = socket.bytesWritten;
    // Read now: node asks the socket's handle once and keeps the answer, and a client that hangs up
    // mid-response has no handle left by the time the line is written (its address read undefined).
    const client = socket.remoteAddress;
    const reqId = requestIdOf(req);
    (res as GatewayResponse).requestId = reqId;
    const info: RequestInfo = { route: '-', rows: 0, token: undefined, instance: undefined, table: undefined, scan: false };
    res.on('close', () => {
      // A response that was running when close() began leaves a kept-alive socket behind: close it
      // once idle, or shutdown waits the whole shutdownGraceMs for a client that will not hang up.
      if (closing) setImmediate(() => server.closeIdleConnections());
      const seconds = (performance.now() - started) / 1000;
      const aborted = !res.writableFinished;
      if (requestLog.enabled) {
        requestLog.write({
          reqId,
          method: req.method ?? '-',
          route: info.route,
          status: res.statusCode,
          ms: Math.round(seconds * 1e5) / 100,
          rows: info.rows,
          aborted,
          client,
          token: info.token,
          instance: info.instance,
          table: info.table,
        });
      }
      metrics.request({
        route: info.route === '-' ? UNMATCHED_ROUTE : info.route,
        method: ROUTED_METHODS.includes(req.method as HTTPMethod) || req.method === 'OPTIONS' ? req.method! : 'other',
        status: res.statusCode,
        seconds,
        rows: info.rows,
        bytes: Math.max(0, socket.bytesWritten - bytesBefore),
        aborted,
        bodyBytes: (req as BodyCounted)[BODY_BYTES] ?? 0,
        instance: info.instance,
        table: info.table,
        scan: info.scan === true,
      });
    });
    const fail = (e: unknown): void => {
      // A client that hangs up mid-body fails the body read (node's 'aborted', ECONNRESET): not a
      // fault of ours and nobody to answer, so it is an aborted request (metrics count it by
      // res.writableFinished) at info; at error with a stack, any client could fill the error log.
      if (!isRowgateError(e) && !req.complete && socket.destroyed) {
        log.info({ reqId, url: req.url, error: (e as Error | undefined)?.message }, 'request aborted by the client');
        res.destroy();
        return;
      }
      const err: RowgateError = asRowgateError(e);
      const authFailure = (e as { authFailure?: AuthFailureReason } | null | undefined)?.authFailure;
      if (authFailure !== undefined) metrics.authFailure(authFailure);
      if (err.code === 'RG_ERR_INTERNAL') log.error({ err: e, url: req.url }, 'internal error');
      // Headers the error implies (Retry-After of a 503, a 401's challenge) come with it: respond.errorHeaders.
      sendError(context, req, res, err);
    };
    let running: Promise<void> | void;
    try {
      running = handle(req, res, info);
    } catch (e) {
      fail(e);
      return;
    }
    running?.catch(fail);
  };

  const limits = config.limits;
  const httpOptions: ServerOptions = {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(config),
    maxHeaderSize: limits.maxHeaderBytes,
    // Checked in handle(), so that the 400 has the coded JSON body.
    requireHostHeader: false,
    // Sends X-Request-Id with every head (gateway-response.ts); node types this option as generic in the request.
    ServerResponse: GatewayResponse as unknown as typeof ServerResponse,
  };
  let server: Server | HttpsServer;
  if (config.tls !== undefined) {
    const cert = readPem('cert', config.tls.cert);
    const key = readPem('key', config.tls.key);
    try {
      // A TLS handshake is bounded like the request head that follows it.
      server = createHttpsServer({ ...httpOptions, cert, key, handshakeTimeout: limits.headersTimeoutMs }, onRequest);
    } catch (e) {
      throw rgError('RG_ERR_BAD_CONFIG', `configuration tls: cannot use ${config.tls.cert} and ${config.tls.key}: ${(e as Error).message}`);
    }
  } else {
    server = createServer(httpOptions, onRequest);
  }
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Requests node's parser refuses (malformed, too slow, head too large): the coded JSON error too.
  server.on('clientError', (err: ParserError, socket: Duplex) => answerClientError(err, socket, config.limits, log));
  // Requests node would answer itself with an empty body (417) or drop unanswered (CONNECT).
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    log.info({ method: req.method, status: 417, expect: req.headers.expect }, 'request refused');
    // Closed after the answer, as node's own 417 is: a body the client may send next is not read.
    res.shouldKeepAlive = false;
    sendError(
      context,
      req,
      res,
      rgError('RG_ERR_EXPECTATION_FAILED', `Expect: ${JSON.stringify(req.headers.expect ?? '')} cannot be met (only 100-continue is)`),
    );
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => answerConnect(socket, log));

  return {
    server,
    context,
    metrics,
    protocol: config.tls === undefined ? 'http' : 'https',
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          if (authenticator === undefined) log.warn('no auth tokens configured: the gateway is open to every client that can reach it');
          else log.info({ tokens: config.auth!.tokens.map((t) => t.name) }, 'bearer tokens required');
          if (config.readOnly) log.info('read-only mode: every write is refused');
          resolve(server.address() as AddressInfo);
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        const force = setTimeout(() => server.closeAllConnections(), config.limits.shutdownGraceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
    reload: (next: Config) => {
      // `config` is read by every request (handle, contextFor) and by close().
      config = next;
      context.config = next;
      authenticator = next.auth === undefined ? undefined : new Authenticator(next.auth);
      cors = createCors(next.cors, next.readOnly);
      // node reads these at its periodic checks and for each idle connection.
      server.headersTimeout = next.limits.headersTimeoutMs;
      server.requestTimeout = next.limits.requestTimeoutMs;
      server.keepAliveTimeout = next.limits.keepAliveTimeoutMs;
      log.level = next.logLevel;
    },
  };
}
