/**
 * Prometheus metrics (prom-client), one registry per gateway so several gateways in one process
 * (tests) never share counters. Served by the admin listener at /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { isRowgateError } from './errors.js';
import type { Store } from './store/store.js';

/** Label of requests no route matched (the raw path would be unbounded cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

export interface RequestSample {
  readonly route: string;
  readonly method: string;
  readonly status: number;
  readonly seconds: number;
  readonly rows: number;
  readonly bytes: number;
  readonly aborted: boolean;
}

/** Counts of one route, method and status since the counters were last brought up to date. */
interface PendingCounts {
  readonly route: string;
  readonly method: string;
  readonly status: string;
  requests: number;
  rows: number;
  bytes: number;
  aborted: number;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly duration: Histogram<'route' | 'method'>;
  private readonly rowsStreamed: Counter<'route'>;
  private readonly rowsWritten: Counter<'route' | 'method'>;
  private readonly bytes: Counter<'route' | 'method'>;
  private readonly aborted: Counter<'route' | 'method'>;
  private readonly storeErrors: Counter<'operation'>;
  /**
   * Request counts not yet added to the Prometheus counters: prom-client hashes a labels object on
   * every inc (and validates it), four counters a request; the counts are added once per series
   * when the counters are read instead (their `collect`). The duration histogram is observed per
   * request, through its series looked up once.
   */
  private readonly pending = new Map<string, PendingCounts>();
  private readonly durations = new Map<string, { observe(v: number): void }>();

  constructor(openScans: () => number, storeOpenScans: () => number) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const flush = (): void => this.flush();
    this.requests = new Counter({ name: 'rowgate_http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames: ['route', 'method', 'status'], registers, collect: flush });
    this.duration = new Histogram({
      name: 'rowgate_http_request_duration_seconds',
      help: 'Time from request to the end of the response (streamed scans included), by route template and method',
      labelNames: ['route', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.rowsStreamed = new Counter({ name: 'rowgate_rows_streamed_total', help: 'Rows sent to clients by GET requests', labelNames: ['route'], registers, collect: flush });
    this.rowsWritten = new Counter({ name: 'rowgate_rows_written_total', help: 'Rows written or deleted by POST, PUT and DELETE requests', labelNames: ['route', 'method'], registers, collect: flush });
    this.bytes = new Counter({ name: 'rowgate_response_bytes_total', help: 'Bytes sent on the wire in responses (headers included)', labelNames: ['route', 'method'], registers, collect: flush });
    this.aborted = new Counter({ name: 'rowgate_http_responses_aborted_total', help: 'Responses that did not complete (client gone, or a stream cut by an error)', labelNames: ['route', 'method'], registers, collect: flush });
    this.storeErrors = new Counter({ name: 'rowgate_store_errors_total', help: 'Store operations that failed for a reason other than a client error, by operation', labelNames: ['operation'], registers });
    new Gauge({
      name: 'rowgate_open_scans',
      help: 'Streaming scans in flight (bounded by limits.maxScans)',
      registers,
      collect() {
        this.set(openScans());
      },
    });
    new Gauge({
      name: 'rowgate_store_open_scans',
      help: 'Store scans started and not yet finished or returned',
      registers,
      collect() {
        this.set(storeOpenScans());
      },
    });
  }

  request(s: RequestSample): void {
    const key = `${s.route} ${s.method} ${s.status}`;
    let p = this.pending.get(key);
    if (p === undefined) {
      p = { route: s.route, method: s.method, status: String(s.status), requests: 0, rows: 0, bytes: 0, aborted: 0 };
      this.pending.set(key, p);
    }
    p.requests++;
    p.rows += s.rows;
    p.bytes += s.bytes;
    if (s.aborted) p.aborted++;
    const dkey = `${s.route} ${s.method}`;
    let duration = this.durations.get(dkey);
    if (duration === undefined) {
      duration = this.duration.labels(s.route, s.method);
      this.durations.set(dkey, duration);
    }
    duration.observe(s.seconds);
  }

  /** Adds the pending request counts to the counters (run before any of them is read). */
  private flush(): void {
    for (const p of this.pending.values()) {
      if (p.requests === 0) continue;
      const { route, method } = p;
      this.requests.inc({ route, method, status: p.status }, p.requests);
      if (p.rows > 0) {
        if (method === 'GET') this.rowsStreamed.inc({ route }, p.rows);
        else this.rowsWritten.inc({ route, method }, p.rows);
      }
      if (p.bytes > 0) this.bytes.inc({ route, method }, p.bytes);
      if (p.aborted > 0) this.aborted.inc({ route, method }, p.aborted);
      p.requests = p.rows = p.bytes = p.aborted = 0;
    }
  }

  storeError(operation: string): void {
    this.storeErrors.inc({ operation });
  }

  /** The Prometheus text exposition. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /**
   * The same metrics as one JSON object keyed by metric name (what a Dropwizard /metrics client
   * parses): `{name: {type, help, values: [{labels, value, metricName?}]}}`; a histogram's
   * values carry the bucket, sum and count series names as `metricName`.
   */
  async json(): Promise<Record<string, { type: string; help: string; values: unknown[] }>> {
    const out: Record<string, { type: string; help: string; values: unknown[] }> = {};
    for (const m of await this.registry.getMetricsAsJSON()) out[m.name] = { type: String(m.type), help: m.help, values: m.values };
    return out;
  }
}

/** A failure that is the store's, not the client's (not found, bad value, ... are not counted). */
function isStoreFailure(e: unknown): boolean {
  return !isRowgateError(e) || e.status >= 500;
}

/**
 * The store seen through a proxy that counts failed operations (rejected promises, and failed
 * `next()` of scans: `scan` and the fast path `scanChunks`, which GET rows and export use on
 * LMDB, scan-worker failures included). Properties (openScans, kind, ...) are read from the store itself.
 */
export function instrumentStore(store: Store, metrics: GatewayMetrics): Store {
  const wrapped = new Map<PropertyKey, unknown>();
  const count = (operation: string) => (e: unknown): never => {
    if (isStoreFailure(e)) metrics.storeError(operation);
    throw e;
  };
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || typeof prop !== 'string' || prop === 'constructor') return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        fn =
          prop === 'scan' || prop === 'scanChunks'
            ? (...args: unknown[]) => {
                let scan: { next: () => Promise<unknown> };
                try {
                  scan = method.apply(target, args) as typeof scan;
                } catch (e) {
                  return count(prop)(e);
                }
                const next = scan.next.bind(scan);
                scan.next = () => next().catch(count(prop));
                return scan;
              }
            : (...args: unknown[]) => {
                let result: unknown;
                try {
                  result = method.apply(target, args);
                } catch (e) {
                  return count(prop)(e);
                }
                return result instanceof Promise ? result.catch(count(prop)) : result;
              };
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}
