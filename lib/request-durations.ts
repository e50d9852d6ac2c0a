/**
 * The request duration histogram, kept in plain numbers: a series (route template and method) is
 * looked up once and observed with a bucket search and three additions. prom-client's Histogram
 * validates and hashes the labels object on every observe, even through a child looked up once:
 * the whole per-request metrics step cost 810 ns with it (bench/request-costs.ts, loaded machine).
 *
 * Registered in a prom-client Registry as a metric of its own (`get()` answers what prom-client's
 * Histogram answers: cumulative `_bucket` values with `le`, then `_sum` and `_count`, aggregated
 * by sum), so /metrics' text, its JSON and cluster aggregation see an ordinary histogram.
 */
import type { Registry } from 'prom-client';

export interface DurationSeries {
  observe(seconds: number): void;
}

interface Series extends DurationSeries {
  readonly labels: Readonly<Record<string, string>>;
  /** counts[i]: observations in (bounds[i-1], bounds[i]]; the last: above every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** One sample as prom-client's Histogram gives it: `le` in labels, the series' labels shared. */
interface ValueOut {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

interface MetricOut {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: ValueOut[];
}

export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these label values (in labelNames order), made on first use. */
  labels(...values: string[]): DurationSeries {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (s === undefined) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i]!));
      const bounds = this.bounds;
      const series: Series = {
        labels,
        counts: new Array<number>(bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
        observe(seconds: number): void {
          let i = 0;
          while (i < bounds.length && seconds > bounds[i]!) i++;
          series.counts[i]!++;
          series.sum += seconds;
          series.count++;
        },
      };
      s = series;
      this.series.set(key, s);
    }
    return s;
  }

  /** What prom-client's Histogram.getForPromString() answers (the text exposition reads this). */
  getForPromString(): Promise<MetricOut> {
    const values: ValueOut[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: bucket, exemplar: null });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** What prom-client's Histogram.get() answers (JSON, cluster aggregation): the shared labels merged in. */
  async get(): Promise<MetricOut> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, ...v }) => ({ ...v, labels: { ...v.labels, ...sharedLabels } }));
    return data;
  }

  reset(): void {
    this.series.clear();
  }
}
