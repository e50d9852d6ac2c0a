/**
 * CORS (configuration `cors`). `true`: any origin, `Access-Control-Allow-Origin: *`, never with
 * credentials. An allow-list echoes the request's Origin only when it is listed (exact match,
 * case-insensitive), adds `Vary: Origin`, and `Access-Control-Allow-Credentials: true` when
 * credentials are on; an unlisted Origin gets no CORS headers at all. '*' is never combined with
 * credentials (the configuration refuses it), and an arbitrary Origin is never reflected.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsConfig } from '../config/config.js';

const ALLOW_HEADERS = 'Content-Type,Accept,Accept-Encoding,Authorization,X-Requested-With,Origin';
const EXPOSE_HEADERS = 'Retry-After,WWW-Authenticate,Content-Encoding';
const MAX_AGE = '1800';

export interface Cors {
  /** Sets the CORS headers of an ordinary response. */
  apply(req: IncomingMessage, res: ServerResponse): void;
  /** Answers a preflight (OPTIONS) request: 204, with the allow headers only for an allowed origin. */
  preflight(req: IncomingMessage, res: ServerResponse): void;
}

/** undefined when CORS is off (OPTIONS is then an ordinary unrouted method). */
export function createCors(config: CorsConfig, readOnly: boolean): Cors | undefined {
  if (config === false) return undefined;
  const methods = readOnly ? 'GET,OPTIONS' : 'GET,POST,PUT,DELETE,OPTIONS';
  const list = config === true ? undefined : new Set(config.origins);
  const anyOrigin = config === true || list!.has('*');
  const credentials = config !== true && config.credentials;

  /** The Access-Control-Allow-Origin value for this request, or undefined for none. */
  const allowOrigin = (req: IncomingMessage): string | undefined => {
    const origin = req.headers.origin;
    if (list !== undefined && typeof origin === 'string' && list.has(origin.toLowerCase())) return origin;
    // '*' only without credentials (configuration guarantees it); never the reflected Origin.
    return anyOrigin && !credentials ? '*' : undefined;
  };

  const common = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (list !== undefined) res.setHeader('vary', 'Origin');
    const origin = allowOrigin(req);
    if (origin === undefined) return false;
    res.setHeader('access-control-allow-origin', origin);
    if (credentials && origin !== '*') res.setHeader('access-control-allow-credentials', 'true');
    return true;
  };

  return {
    apply(req, res) {
      if (common(req, res)) res.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
    },
    preflight(req, res) {
      if (common(req, res)) {
        res.setHeader('access-control-allow-methods', methods);
        res.setHeader('access-control-allow-headers', ALLOW_HEADERS);
        res.setHeader('access-control-max-age', MAX_AGE);
      }
      res.writeHead(204, { 'content-length': '0' });
      res.end();
    },
  };
}
