/**
 * Prometheus metrics (prom-client), one registry per gateway so several gateways in one process
 * (tests) never share counters. Served by the admin listener at /metrics (with --workers, summed
 * over every worker: metrics/metrics-cluster.ts). What a request records costs a few map lookups and
 * additions (metrics/plain-metrics.ts); label sets are bounded (route templates, methods, statuses, at
 * most MAX_TABLES instance/table pairs, store operations, auth failure reasons).
 */
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { isRowgateError } from '../errors.js';
import { metricsTextToJson, type MetricsTree } from './metrics-json.js';
import { PlainCounter, PlainHistogram, type CounterSeries, type HistogramSeries } from './plain-metrics.js';
import type { Store } from '../store/store.js';

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
  /** Request body bytes read (jsonBodyItems; 0 or absent for a body refused or not read). */
  readonly bodyBytes?: number;
  /** The route's instance and table, when it has them. */
  readonly instance?: string;
  readonly table?: string;
  /** A streamed scan (it held a maxScans slot). */
  readonly scan?: boolean;
}

/**
 * Instance/table pairs with series of their own (labels instance_name and table_name: Prometheus
 * gives `instance` to the scrape target). A pair gets them once a request on it succeeds
 * (so it exists: names in failed requests are whatever a client typed); past this many, and
 * before that, its requests count under instance and table "-".
 */
export const MAX_TABLES = 1000;

/** Why a request was refused by access control (label `reason` of rowgate_auth_failures_total). */
export type AuthFailureReason = 'missing' | 'malformed' | 'unknown_token' | 'scope';

/** Series of one instance/table pair, made as they are first needed. */
interface TableSeries {
  readonly instance: string;
  readonly table: string;
  /** By access (read 0-3, write 4-7) and status class (2xx..5xx). */
  readonly requests: (CounterSeries | undefined)[];
  rowsRead?: CounterSeries;
  rowsWritten?: CounterSeries;
}

/**
 * The series one route and method write to, looked up once: the duration histogram, the request
 * count by status, and the byte, abort and row counts, each made on its first non-zero add (a
 * series never added to is not exposed, as prom-client's counters were not).
 */
interface RouteSeries {
  readonly duration: HistogramSeries;
  readonly byStatus: Map<number, CounterSeries>;
  rows?: CounterSeries;
  bytes?: CounterSeries;
  aborted?: CounterSeries;
  received?: CounterSeries;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: PlainCounter;
  private readonly duration: PlainHistogram;
  private readonly rowsStreamed: PlainCounter;
  private readonly rowsWritten: PlainCounter;
  private readonly bytes: PlainCounter;
  private readonly aborted: PlainCounter;
  private readonly received: PlainCounter;
  private readonly storeErrors: Counter<'operation'>;
  private readonly storeSeconds: PlainHistogram;
  private readonly tableRequests: PlainCounter;
  private readonly tableRows: PlainCounter;
  private readonly tables = new Map<string, Map<string, TableSeries>>();
  private tableCount = 0;
  private readonly otherTable: TableSeries;
  private readonly scanSeconds: HistogramSeries;
  private readonly scanBytes: HistogramSeries;
  private readonly authFailures: PlainCounter;
  /** With --workers: where /metrics gets the text summed over every worker (metrics/metrics-cluster.ts). */
  private gather: (() => Promise<string>) | undefined;
  /**
   * route -> method -> its series. Plain counters and histograms (metrics/plain-metrics.ts): prom-client
   * hashes and validates a labels object on every inc and observe, six of them a request; the maps
   * are keyed by the strings as they come (route templates and methods are the same string objects
   * each time, their hashes cached), not by keys concatenated per request: 810 -> 16 ns a request
   * (bench/request-costs.ts).
   */
  private readonly series = new Map<string, Map<string, RouteSeries>>();

  constructor(openScans: () => number, storeOpenScans: () => number) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new PlainCounter({
      name: 'rowgate_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.duration = new PlainHistogram({
      name: 'rowgate_http_request_duration_seconds',
      help: 'Time from request to the end of the response (streamed scans included), by route template and method',
      labelNames: ['route', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.rowsStreamed = new PlainCounter({
      name: 'rowgate_rows_streamed_total',
      help: 'Rows sent to clients by GET requests',
      labelNames: ['route'],
      registers,
    });
    this.rowsWritten = new PlainCounter({
      name: 'rowgate_rows_written_total',
      help: 'Rows written or deleted by POST, PUT and DELETE requests',
      labelNames: ['route', 'method'],
      registers,
    });
    this.bytes = new PlainCounter({
      name: 'rowgate_response_bytes_total',
      help: 'Bytes sent on the wire in responses (headers included)',
      labelNames: ['route', 'method'],
      registers,
    });
    this.aborted = new PlainCounter({
      name: 'rowgate_http_responses_aborted_total',
      help: 'Responses that did not complete (client gone, or a stream cut by an error)',
      labelNames: ['route', 'method'],
      registers,
    });
    this.received = new PlainCounter({
      name: 'rowgate_request_body_bytes_total',
      help: 'Request body bytes read (POST and PUT rows; a body refused before it is read counts none), by route template and method',
      labelNames: ['route', 'method'],
      registers,
    });
    this.storeErrors = new Counter({
      name: 'rowgate_store_errors_total',
      help: 'Store operations that failed for a reason other than a client error, by operation',
      labelNames: ['operation'],
      registers,
    });
    this.storeSeconds = new PlainHistogram({
      name: 'rowgate_store_operation_seconds',
      help: 'Time a store operation took, by operation (a scan: each batch it yields)',
      labelNames: ['operation'],
      buckets: [0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    });
    this.tableRequests = new PlainCounter({
      name: 'rowgate_table_requests_total',
      help: `Requests on a table, by instance, table, access (read, write) and status class; "-" for tables without series of their own (at most ${MAX_TABLES})`,
      labelNames: ['instance_name', 'table_name', 'access', 'status_class'],
      registers,
    });
    this.tableRows = new PlainCounter({
      name: 'rowgate_table_rows_total',
      help: 'Rows read (sent) or written (written or deleted) on a table, by instance, table and direction',
      labelNames: ['instance_name', 'table_name', 'direction'],
      registers,
    });
    this.otherTable = { instance: '-', table: '-', requests: [] };
    const scanSeconds = new PlainHistogram({
      name: 'rowgate_scan_duration_seconds',
      help: 'Time from request to the last byte of a streamed scan',
      labelNames: [],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
      registers,
    });
    this.scanSeconds = scanSeconds.labels();
    const scanBytes = new PlainHistogram({
      name: 'rowgate_scan_response_bytes',
      help: 'Bytes a streamed scan sent (on the wire, headers included)',
      labelNames: [],
      buckets: [1024, 16384, 131072, 1048576, 8388608, 67108864, 536870912, 4294967296],
      registers,
    });
    this.scanBytes = scanBytes.labels();
    this.authFailures = new PlainCounter({
      name: 'rowgate_auth_failures_total',
      help: 'Requests refused by access control, by reason: missing, malformed or unknown_token (401), scope (403)',
      labelNames: ['reason'],
      registers,
    });
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
    const r = this.routeSeries(s.route, s.method);
    let requests = r.byStatus.get(s.status);
    if (requests === undefined) {
      requests = this.requests.labels(s.route, s.method, String(s.status));
      r.byStatus.set(s.status, requests);
    }
    requests.value++;
    if (s.rows > 0) {
      if (s.method === 'GET') (r.rows ??= this.rowsStreamed.labels(s.route)).value += s.rows;
      else (r.rows ??= this.rowsWritten.labels(s.route, s.method)).value += s.rows;
    }
    if (s.bytes > 0) (r.bytes ??= this.bytes.labels(s.route, s.method)).value += s.bytes;
    if (s.aborted) (r.aborted ??= this.aborted.labels(s.route, s.method)).value++;
    if (s.bodyBytes) (r.received ??= this.received.labels(s.route, s.method)).value += s.bodyBytes;
    r.duration.observe(s.seconds);
    if (s.scan) {
      this.scanSeconds.observe(s.seconds);
      this.scanBytes.observe(s.bytes);
    }
    if (s.table !== undefined && s.instance !== undefined) this.tableRequest(s, s.instance, s.table);
  }

  private routeSeries(route: string, method: string): RouteSeries {
    let byMethod = this.series.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.series.set(route, byMethod);
    }
    let r = byMethod.get(method);
    if (r === undefined) {
      r = { duration: this.duration.labels(route, method), byStatus: new Map() };
      byMethod.set(method, r);
    }
    return r;
  }

  private tableRequest(s: RequestSample, instance: string, table: string): void {
    const t = this.tables.get(instance)?.get(table) ?? this.newTable(instance, table, s.status);
    const write = s.method !== 'GET' && s.method !== 'HEAD';
    const cls = Math.min(5, Math.max(2, Math.floor(s.status / 100)));
    const i = (write ? 4 : 0) + cls - 2;
    const series = (t.requests[i] ??= this.tableRequests.labels(t.instance, t.table, write ? 'write' : 'read', `${cls}xx`));
    series.value++;
    if (s.rows > 0) {
      if (write) (t.rowsWritten ??= this.tableRows.labels(t.instance, t.table, 'written')).value += s.rows;
      else (t.rowsRead ??= this.tableRows.labels(t.instance, t.table, 'read')).value += s.rows;
    }
  }

  /** The series of a pair not seen succeeding yet (see MAX_TABLES). */
  private newTable(instance: string, table: string, status: number): TableSeries {
    if (status >= 400 || this.tableCount >= MAX_TABLES) return this.otherTable;
    let byTable = this.tables.get(instance);
    if (byTable === undefined) this.tables.set(instance, (byTable = new Map()));
    const t: TableSeries = { instance, table, requests: [] };
    byTable.set(table, t);
    this.tableCount++;
    return t;
  }

  authFailure(reason: AuthFailureReason): void {
    this.authFailures.labels(reason).value++;
  }

  /** The series timing one store operation (look it up once per operation). */
  storeTimer(operation: string): HistogramSeries {
    return this.storeSeconds.labels(operation);
  }

  /** With --workers: /metrics answers with what `gather` returns (every worker's metrics summed). */
  gatherWith(gather: () => Promise<string>): void {
    this.gather = gather;
  }

  storeError(operation: string): void {
    this.storeErrors.inc({ operation });
  }

  /** The Prometheus text exposition. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: this.gather === undefined ? await this.registry.metrics() : await this.gather() };
  }

  /** The same metrics as nested JSON objects (metrics/metrics-json.ts), made from the text, so summed over workers as it is. */
  async json(): Promise<Record<string, MetricsTree>> {
    return metricsTextToJson((await this.text()).body);
  }
}

/** A failure that is the store's, not the client's (not found, bad value, ... are not counted). */
function isStoreFailure(e: unknown): boolean {
  return !isRowgateError(e) || e.status >= 500;
}

/**
 * The store with every method timed (rowgate_store_operation_seconds) and its failures counted
 * (rejected promises, and failed `next()` of scans: `scan` and the fast path `scanChunks`, which
 * GET rows and export use on LMDB, scan-worker failures included). An object whose prototype is
 * the store, with getters of the wrapped methods its own: properties (openScans, kind, ...) are
 * read from the store itself, and a call costs no Proxy trap (a point GET makes three store calls).
 */
export function instrumentStore(store: Store, metrics: GatewayMetrics): Store {
  const count =
    (operation: string) =>
    (e: unknown): never => {
      if (isStoreFailure(e)) metrics.storeError(operation);
      throw e;
    };
  /** Settles like `result`, recording its time (a promise: until it settles) and counting a failure. */
  const timed = (operation: string, timer: HistogramSeries, started: number, result: unknown): unknown => {
    if (!(result instanceof Promise)) {
      timer.observe((performance.now() - started) / 1000);
      return result;
    }
    return result.then(
      (value: unknown) => {
        timer.observe((performance.now() - started) / 1000);
        return value;
      },
      (e: unknown) => {
        timer.observe((performance.now() - started) / 1000);
        return count(operation)(e);
      },
    );
  };
  // The method is looked up on the store at each call, so one replaced later (tests inject
  // failures that way, or switch a fast path off) is the one called.
  const methods = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  const wrap = (prop: string): ((...args: unknown[]) => unknown) => {
    // layoutNow is getLayout without its promise: recorded as the same operation.
    const operation = prop === 'layoutNow' ? 'getLayout' : prop;
    const timer = metrics.storeTimer(operation);
    if (prop === 'scan' || prop === 'scanChunks') {
      return (...args: unknown[]) => {
        let scan: { next: () => Promise<unknown> };
        try {
          scan = methods[prop]!.apply(store, args) as typeof scan;
        } catch (e) {
          return count(operation)(e);
        }
        const next = scan.next.bind(scan);
        scan.next = () => timed(operation, timer, performance.now(), next()) as Promise<unknown>;
        return scan;
      };
    }
    if (prop === 'layoutNow') {
      // A cache read of well under a microsecond: counted as a getLayout taking 0 s, with no clock
      // read around it (two performance.now() calls, ~40 ns each, cost more than the read itself).
      return (...args: unknown[]) => {
        timer.observe(0);
        try {
          return methods[prop]!.apply(store, args);
        } catch (e) {
          return count(operation)(e);
        }
      };
    }
    return (...args: unknown[]) => {
      const started = performance.now();
      let result: unknown;
      try {
        result = methods[prop]!.apply(store, args);
      } catch (e) {
        timer.observe((performance.now() - started) / 1000);
        return count(operation)(e);
      }
      return timed(operation, timer, started, result);
    };
  };
  const instrumented = Object.create(store) as Store;
  const seen = new Set<string>();
  for (let proto: object | null = store; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const prop of Object.getOwnPropertyNames(proto)) {
      if (prop === 'constructor' || seen.has(prop)) continue;
      seen.add(prop);
      const descriptor = Object.getOwnPropertyDescriptor(proto, prop)!;
      // Methods only: getters (openScans, ...) and fields stay the store's, read through the prototype.
      if (typeof descriptor.value !== 'function') continue;
      const wrapper = wrap(prop);
      // A method the store no longer has (an optional fast path switched off) reads as it is.
      Object.defineProperty(instrumented, prop, { get: () => (typeof methods[prop] === 'function' ? wrapper : methods[prop]) });
    }
  }
  return instrumented;
}
