/**
 * RequestDurations (lib/request-durations.ts) answers exactly what prom-client's Histogram
 * answers for the same observations: the Prometheus text, the JSON, and the sum of several
 * workers' JSON (AggregatorRegistry), bound values (an observation equal to a bucket's bound
 * counts in that bucket) and values past the last bound included.
 */
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import t from 'tap';
import { RequestDurations } from '../lib/request-durations.js';

const NAME = 'rowgate_http_request_duration_seconds';
const HELP = 'Time from request to the end of the response';
const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Deterministic observations: every bound exactly, values between, zero, and beyond the last bound. */
function observations(seed: number): { route: string; method: string; seconds: number }[] {
  const out: { route: string; method: string; seconds: number }[] = [];
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const series = [['/v1/instances/:instance/tables/:table/rows', 'GET'], ['/v1/instances/:instance/tables/:table/rows', 'POST'], ['unmatched', 'other']] as const;
  for (const b of [0, ...BOUNDS, 301, 1e6]) out.push({ route: series[0][0], method: series[0][1], seconds: b });
  for (let i = 0; i < 2000; i++) {
    const [route, method] = series[Math.floor(next() * series.length)]!;
    out.push({ route, method, seconds: Math.exp(next() * 14 - 9) });
  }
  return out;
}

function both(seed: number) {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ['route', 'method'], buckets: BOUNDS, registers: [theirs] });
  const durations = new RequestDurations(NAME, HELP, ['route', 'method'], BOUNDS, ours);
  for (const o of observations(seed)) {
    histogram.labels(o.route, o.method).observe(o.seconds);
    durations.labels(o.route, o.method).observe(o.seconds);
  }
  return { theirs, ours };
}

t.test('the Prometheus text is byte for byte prom-client Histogram\'s', async (t) => {
  const { theirs, ours } = both(7);
  const text = await ours.metrics();
  t.equal(text, await theirs.metrics());
  t.match(text, /_bucket\{le="0.001",route="[^"]+",method="GET"\} \d+/);
});

t.test('the JSON and the sum over workers are prom-client Histogram\'s', async (t) => {
  const a = both(11);
  const b = both(12);
  t.same(await a.ours.getMetricsAsJSON(), await a.theirs.getMetricsAsJSON());
  const oursSum = AggregatorRegistry.aggregate([await a.ours.getMetricsAsJSON(), await b.ours.getMetricsAsJSON()] as never);
  const theirsSum = AggregatorRegistry.aggregate([await a.theirs.getMetricsAsJSON(), await b.theirs.getMetricsAsJSON()] as never);
  t.equal(await oursSum.metrics(), await theirsSum.metrics());
});

t.test('reset() forgets every series, as Histogram.reset() does', async (t) => {
  const { theirs, ours } = both(3);
  (theirs.getSingleMetric(NAME) as Histogram).reset();
  (ours.getSingleMetric(NAME) as unknown as RequestDurations).reset();
  t.equal(await ours.metrics(), await theirs.metrics());
});
