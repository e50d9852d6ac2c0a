/**
 * Streamed scans end with trailers: X-Rowgate-Rows (rows sent) and, when `limit` stopped the scan
 * before the end of its range, X-Rowgate-Next-Start (the next page's start_eid, or start_rk in
 * revisions 1-2). Paging by them visits every row once; the bytes are those of a scan without
 * them; HTTP/1.0 clients get the same body and no trailers; gzip keeps them.
 */
import { connect } from 'node:net';
import { get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { PLAYERS_LAYOUT, raw, SAMPLE_LAYOUT, startGateway, startGatewayOver } from './harness.js';
import { getWithTrailers, pageThrough } from './suites/trailers-check.js';

const ROWS = 250;
const SAMPLE = '/v1/instances/default/tables/sample_table/rows';
const PLAYERS = '/v1/instances/default/tables/players/rows';

async function filled(options: Record<string, unknown> = {}) {
  const h = await startGateway(options);
  const sample = parseLayout(SAMPLE_LAYOUT).keyFormat;
  const players = parseLayout(PLAYERS_LAYOUT).keyFormat;
  const rows: RowWrite[] = [];
  const people: RowWrite[] = [];
  for (let i = 0; i < ROWS; i++) {
    rows.push({
      rowKey: encodeRowKey(sample, [BigInt(i) * 7919n + 9007199254740993n]),
      cells: [{ kind: 'value', family: 'strings', qualifier: 'q', timestamp: 1, schemaId: 0, json: JSON.stringify(`row ${i}\r\n`) }],
    });
    people.push({
      rowKey: encodeRowKey(players, [`name ${i % 17}`, `domain "${i}"`]),
      cells: [{ kind: 'value', family: 'info', qualifier: 'email', timestamp: 1, schemaId: 0, json: '"a@b"' }],
    });
  }
  await h.store.write('default', 'sample_table', rows);
  await h.store.write('default', 'players', people);
  return h;
}

t.test('pages by the next-start trailer visit every row once, in every revision', async (t) => {
  const h = await filled();
  t.teardown(() => h.close());
  for (const path of [SAMPLE, PLAYERS]) {
    const full = await getWithTrailers(h.base, `${path}?limit=-1`);
    t.equal(full.trailers['x-rowgate-rows'], String(ROWS), 'limit=-1: every row counted');
    t.equal(full.trailers['x-rowgate-next-start'], undefined, 'limit=-1: no next page');
    for (const size of [1, 100, 249, 250])
      t.equal(await pageThrough(t, h.base, path, size, 'start_eid', ROWS), full.body, `${path} pages of ${size}: the full scan`);
  }
  for (const revision of [1, 2] as const) {
    const g = await startGatewayOver(h.store, { revision });
    t.teardown(() => g.close());
    const full = await raw(g.base, 'GET', `${SAMPLE}?limit=-1`);
    t.equal(await pageThrough(t, g.base, SAMPLE, 64, 'start_rk', ROWS), full.body, `revision ${revision}: pages by start_rk are the full scan`);
  }
});

t.test('a limit that reaches the end of the range names no next page; limit=0 names the first row', async (t) => {
  const h = await filled();
  t.teardown(() => h.close());
  const exact = await getWithTrailers(h.base, `${SAMPLE}?limit=${ROWS}`);
  t.equal(exact.trailers['x-rowgate-rows'], String(ROWS));
  t.equal(exact.trailers['x-rowgate-next-start'], undefined, 'limit = rows in the range: complete, no next page');
  const zero = await getWithTrailers(h.base, `${SAMPLE}?limit=0`);
  t.equal(zero.body, '');
  t.equal(zero.trailers['x-rowgate-rows'], '0');
  const first = await getWithTrailers(h.base, `${SAMPLE}?limit=1`);
  const rest = await getWithTrailers(h.base, `${SAMPLE}?limit=1&start_eid=${encodeURIComponent(zero.trailers['x-rowgate-next-start']!)}`);
  t.equal(rest.body, first.body, 'limit=0 names the first row as the next start');
  // A wildcard scan pages too (its next start is a plain position).
  const wild = await getWithTrailers(h.base, `${PLAYERS}?eid=${encodeURIComponent('["name 3", []]')}&limit=5`);
  t.equal(wild.trailers['x-rowgate-rows'], '5');
  t.match(wild.trailers['x-rowgate-next-start'], /^rowkey_hex=[0-9a-f]+$/);
  const empty = await getWithTrailers(h.base, `${SAMPLE}?start_eid=rowkey_hex=ffffffffffffffffffffffff&limit=10`);
  t.same([empty.body, empty.trailers['x-rowgate-rows'], empty.trailers['x-rowgate-next-start']], ['', '0', undefined], 'an empty range: 0 rows, complete');
});

t.test('the body is unchanged for clients that ignore trailers: HTTP/1.0 gets no trailers, gzip keeps them', async (t) => {
  const h = await filled({ compression: true });
  t.teardown(() => h.close());
  const page = await getWithTrailers(h.base, `${SAMPLE}?limit=100`);
  const full = await raw(h.base, 'GET', `${SAMPLE}?limit=-1`);
  t.equal(page.body, full.body.split('\r\n').slice(0, 100).join('\r\n') + '\r\n', 'the first 100 rows of the full scan, nothing more');
  t.equal(page.headers.trailer, undefined, 'no Trailer header: the headers are as before');

  const url = new URL(h.base);
  const http10 = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(url.port), '127.0.0.1', () => socket.end(`GET ${SAMPLE}?limit=100 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
  const [head, ...body] = http10.split('\r\n\r\n');
  t.match(head, /^HTTP\/1\.1 200 /);
  t.notMatch(head!.toLowerCase(), /transfer-encoding|x-rowgate/, 'HTTP/1.0: not chunked, no trailers');
  t.equal(body.join('\r\n\r\n'), page.body, 'HTTP/1.0: the same body');

  const gz = await new Promise<{ body: Buffer; trailers: Record<string, string | undefined> }>((resolve, reject) => {
    get(`${h.base}${SAMPLE}?limit=100`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ body: Buffer.concat(chunks), trailers: res.trailers }));
    }).on('error', reject);
  });
  t.equal(gunzipSync(gz.body).toString('utf8'), page.body, 'gzip: the same rows');
  t.equal(gz.trailers['x-rowgate-rows'], '100');
  t.equal(gz.trailers['x-rowgate-next-start'], page.trailers['x-rowgate-next-start']);
  const head1 = await raw(h.base, 'HEAD', `${SAMPLE}?limit=100`);
  t.equal(head1.body, '', 'HEAD: no body (and no trailers)');
});
