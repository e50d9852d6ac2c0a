/**
 * With `serve --workers 2`, /metrics answers for the whole server whichever worker takes the
 * scrape: every worker's counters summed (lib/metrics/metrics-cluster.ts).
 */
import { join } from 'node:path';
import t from 'tap';
import { ensureBuilt, serveCli, tempDir } from './helpers.js';

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

t.before(ensureBuilt);

t.test('one /metrics for all workers', async (t) => {
  const dir = tempDir(t);
  const served = await serveCli(t, ['--data', join(dir, 'data'), '--port', '0', '--host', '127.0.0.1', '--workers', '2', '--log-level', 'warn']);
  const { port, adminPort } = served;
  // Fresh connections, so that both workers take some.
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/instances/default/tables/users/rows?eid=[${1000 + i}]`, { headers: { connection: 'close' } });
    t.equal(res.status, 200);
    await res.arrayBuffer();
  }
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`http://127.0.0.1:${adminPort}/metrics`, { headers: { connection: 'close' } });
    t.equal(res.status, 200);
    const text = await res.text();
    t.equal(
      sample(text, 'rowgate_http_requests_total', { route: '/v1/instances/:instance/tables/:table/rows', method: 'GET', status: '200' }),
      20,
      `scrape ${i}: the requests of both workers`,
    );
    t.equal(
      sample(text, 'rowgate_table_rows_total', { instance_name: 'default', table_name: 'users', direction: 'read' }),
      20,
      `scrape ${i}: rows per table summed`,
    );
    t.equal(
      sample(text, 'rowgate_http_request_duration_seconds_count', { route: '/v1/instances/:instance/tables/:table/rows', method: 'GET' }),
      20,
      `scrape ${i}: histograms summed`,
    );
  }
  t.equal(await served.stop(), 0);
  t.notMatch(served.stderr(), /"level":50/, 'no error logged');
});
