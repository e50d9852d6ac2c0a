/**
 * The Prometheus text exposition as nested JSON objects, for clients that read /metrics as JSON
 * the way they read Dropwizard 0.6's (Metrics 2.2) there: KijiREST's Python client, and its
 * tsdb_collector, which walks the document with `.items()` down to numbers. So every value is an
 * object until a number: one object per metric family, one level of keys per label (the label's
 * value), then the fields of the series:
 *
 *   {"rowgate_http_requests_total": {"<route>": {"GET": {"200": {"count": 3}}}},
 *    "process_resident_memory_bytes": {"value": 4.5e7},
 *    "rowgate_http_request_duration_seconds": {"<route>": {"GET": {"count": 2, "sum": 0.01,
 *        "buckets": {"0.001": 0, ..., "+Inf": 2}}}}}
 *
 * Fields: `count` for a counter, `value` for a gauge or untyped metric; a histogram's `count`,
 * `sum` and `buckets` (by `le`), a summary's `count`, `sum` and `quantiles` (by `quantile`). Label
 * levels come in the order the family's samples name their labels; a sample without one of them
 * sits under "" there (Prometheus reads an empty label as an absent one), so fields only ever
 * appear at the depth of the last label and never collide with label values. A value that is not
 * a finite number (NaN, +Inf), which JSON cannot hold and the collector cannot sum, is left out.
 *
 * Made from the text rather than from the registry, so the two forms always hold the same
 * numbers, summed over every worker when the text is (metrics/metrics-cluster.ts).
 */

/** An object at every level, numbers at the leaves. */
export interface MetricsTree {
  [key: string]: MetricsTree | number;
}

interface Sample {
  /** What follows the family's name in the series name: '', '_bucket', '_sum', '_count'. */
  readonly suffix: string;
  readonly labels: readonly (readonly [string, string])[];
  readonly value: number;
}

interface Family {
  type: string;
  readonly samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
/** The series of a family: its own name, and a histogram's or summary's parts. */
const SERIES_SUFFIXES = new Set(['', '_bucket', '_sum', '_count']);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescapeLabel(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** A node without a prototype: a label value "__proto__" is then an ordinary key. */
function node(): MetricsTree {
  return Object.create(null) as MetricsTree;
}

function child(parent: MetricsTree, key: string): MetricsTree {
  const existing = parent[key];
  if (typeof existing === 'object') return existing;
  const made = node();
  parent[key] = made;
  return made;
}

/** The label that names a histogram's bucket or a summary's quantile: a field of the series, not a level. */
function fieldLabel(type: string): string | undefined {
  return type === 'histogram' ? 'le' : type === 'summary' ? 'quantile' : undefined;
}

/** Where a sample's value goes in its series' object: a field, or a field's key (a bucket, a quantile). */
function fieldPath(type: string, sample: Sample, field: string | undefined): [string] | [string, string] {
  if (sample.suffix === '_sum') return ['sum'];
  if (sample.suffix === '_count') return ['count'];
  const at = field === undefined ? undefined : sample.labels.find(([n]) => n === field)?.[1];
  if (type === 'histogram' && sample.suffix === '_bucket') return ['buckets', at ?? ''];
  if (type === 'summary' && at !== undefined) return ['quantiles', at];
  return [type === 'counter' ? 'count' : 'value'];
}

function familyTree(family: Family): MetricsTree {
  const field = fieldLabel(family.type);
  const levels: string[] = [];
  for (const s of family.samples) for (const [name] of s.labels) if (name !== field && !levels.includes(name)) levels.push(name);
  const tree = node();
  for (const s of family.samples) {
    if (!Number.isFinite(s.value)) continue;
    let at = tree;
    for (const level of levels) at = child(at, s.labels.find(([n]) => n === level)?.[1] ?? '');
    const path = fieldPath(family.type, s, field);
    if (path.length === 1) at[path[0]] = s.value;
    else child(at, path[0])[path[1]] = s.value;
  }
  return tree;
}

export function metricsTextToJson(text: string): Record<string, MetricsTree> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (f === undefined) families.set(name, (f = { type: 'untyped', samples: [] }));
    return f;
  };
  let current: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) {
      const rest = line.slice(7);
      const space = rest.indexOf(' ');
      const name = space < 0 ? rest : rest.slice(0, space);
      if (line[2] === 'T') family(name).type = space < 0 ? 'untyped' : rest.slice(space + 1).trim();
      else family(name);
      current = name;
      continue;
    }
    const m = SAMPLE.exec(line);
    if (m === null) continue;
    const name = m[1]!;
    const owner = current !== undefined && name.startsWith(current) && SERIES_SUFFIXES.has(name.slice(current.length)) ? current : name;
    const labels: [string, string][] = [];
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels.push([l[1]!, unescapeLabel(l[2]!)]);
    family(owner).samples.push({ suffix: name.slice(owner.length), labels, value: Number(m[3]) });
  }
  const out = node() as Record<string, MetricsTree>;
  for (const [name, f] of families) out[name] = familyTree(f);
  return out;
}
