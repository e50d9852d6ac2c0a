/**
 * Counters and histograms for per-request paths: a series (one set of label values) is looked up
 * once and kept by the caller, and recording is adding to plain numbers. prom-client hashes and
 * validates a labels object on every inc() and observe(), series child included. These register
 * in a prom-client Registry like its own metrics (the registry reads them through get()), so
 * /metrics, getMetricsAsJSON and the cluster aggregation (AggregatorRegistry, sum) see them.
 */
import type { Registry } from 'prom-client';
import { registerMetric } from '../deps/internals.js';

type LabelValues = Record<string, string>;

interface Value {
  value: number;
  labels: LabelValues;
  metricName?: string;
}

export interface CounterSeries {
  value: number;
}

export interface HistogramSeries {
  observe(value: number): void;
}

interface Options {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly registers: readonly Registry[];
}

abstract class PlainMetric<S> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  protected readonly series = new Map<string, { labels: LabelValues; series: S }>();
  private readonly labelNames: readonly string[];

  constructor(options: Options) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    for (const r of options.registers) registerMetric(r, this);
  }

  protected abstract create(): S;

  /** The series of these label values (in labelNames order): look it up once, then keep it. */
  labels(...values: string[]): S {
    const key = values.join('\u0000');
    let entry = this.series.get(key);
    if (entry === undefined) {
      if (values.length !== this.labelNames.length) throw new Error(`${this.name}: ${this.labelNames.length} label values expected, got ${values.length}`);
      const labels: LabelValues = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i]!));
      entry = { labels, series: this.create() };
      this.series.set(key, entry);
    }
    return entry.series;
  }

  /** What prom-client's registry reads. */
  abstract get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Value[] }>;

  reset(): void {
    this.series.clear();
  }
}

export class PlainCounter extends PlainMetric<CounterSeries> {
  protected create(): CounterSeries {
    return { value: 0 };
  }

  async get() {
    const values: Value[] = [];
    for (const { labels, series } of this.series.values()) values.push({ labels, value: series.value });
    return { name: this.name, help: this.help, type: 'counter', aggregator: this.aggregator, values };
  }
}

class BucketCounts implements HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const b = this.bounds;
    let i = 0;
    // Prometheus buckets are "less than or equal"; the last slot is +Inf.
    while (i < b.length && value > b[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class PlainHistogram extends PlainMetric<BucketCounts> {
  private readonly bounds: readonly number[];

  constructor(options: Options & { readonly buckets: readonly number[] }) {
    super(options);
    this.bounds = [...options.buckets].sort((a, b) => a - b);
  }

  protected create(): BucketCounts {
    return new BucketCounts(this.bounds);
  }

  async get() {
    const values: Value[] = [];
    for (const { labels, series } of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += series.counts[i]!;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { ...labels, le: i < this.bounds.length ? String(this.bounds[i]) : '+Inf' },
          value: cumulative,
        });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: series.count });
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: this.aggregator, values };
  }
}
