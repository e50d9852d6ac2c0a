/**
 * The Prometheus text exposition as one JSON object keyed by metric family, for clients that
 * parse /metrics as JSON (KijiREST's Python client read Dropwizard's JSON there):
 *
 *   {"<family>": {"type": "counter", "help": "...", "values": [{"labels": {...}, "value": 3}]}}
 *
 * Made from the text rather than from the registry, so the two forms always hold the same
 * numbers, summed over every worker when the text is (metrics/metrics-cluster.ts). A histogram's or
 * summary's samples carry their series name (`..._bucket`, `..._sum`, `..._count`) as
 * `metricName`. Values are numbers (`+Inf` and `NaN` become null, which JSON cannot hold).
 */

export interface MetricFamilyJson {
  type: string;
  help: string;
  values: { labels: Record<string, string>; value: number | null; metricName?: string }[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
/** The series of a family: its own name, and a histogram's or summary's parts. */
const SERIES_SUFFIXES = new Set(['', '_bucket', '_sum', '_count']);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescapeLabel(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

export function metricsTextToJson(text: string): Record<string, MetricFamilyJson> {
  const out: Record<string, MetricFamilyJson> = {};
  const family = (name: string): MetricFamilyJson => (out[name] ??= { type: 'untyped', help: '', values: [] });
  let current: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) {
      const rest = line.slice(7);
      const space = rest.indexOf(' ');
      const name = space < 0 ? rest : rest.slice(0, space);
      const value = space < 0 ? '' : rest.slice(space + 1);
      if (line[2] === 'H') family(name).help = value.replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      else family(name).type = value;
      current = name;
      continue;
    }
    const m = SAMPLE.exec(line);
    if (m === null) continue;
    const name = m[1]!;
    const owner = current !== undefined && name.startsWith(current) && SERIES_SUFFIXES.has(name.slice(current.length)) ? current : name;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = unescapeLabel(l[2]!);
    const n = Number(m[3]);
    family(owner).values.push({ labels, value: Number.isFinite(n) ? n : null, ...(name === owner ? {} : { metricName: name }) });
  }
  return out;
}
