/**
 * Bodies above the whole-parse threshold (1 MiB) go through the streaming parser: the same rows,
 * the same errors, exact 64-bit integers, and the size limit enforced while reading.
 */
import t from 'tap';
import { json, raw, rowsOf, startGateway } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

function bigBody(count: number, extra = ''): string {
  const rows = Array.from({ length: count }, (_, i) => `{"entityId":[${i}],"cells":{"strings":{"s":[{"value":"${'v'.repeat(100)}${i}","timestamp":7}]},"longs":{"l":[{"value":9007199254740993,"timestamp":7}]}}}`);
  return `[${rows.join(',')}${extra}]`;
}

t.test('a 2 MB array body is streamed, validated and written whole', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const body = bigBody(12_000);
  t.ok(body.length > 2_000_000);
  const res = await raw(h.base, 'POST', ROWS, body, json);
  t.equal(res.status, 200, res.body.slice(0, 300));
  const targets = (JSON.parse(res.body) as { targets: string[] }).targets;
  t.equal(targets.length, 12_000);
  t.equal(targets[11_999], `${ROWS}?eid=${encodeURIComponent('[11999]')}`);
  const [row] = rowsOf((await raw(h.base, 'GET', `${ROWS}?eid=[11999]`)).body) as { cells: { strings: { s: { value: string }[] }; longs: { l: unknown[] } } }[];
  t.equal(row!.cells.strings.s[0]!.value, `${'v'.repeat(100)}11999`);
  t.match((await raw(h.base, 'GET', `${ROWS}?eid=[11999]&cols=longs`)).body, /"value":9007199254740993,/, 'exact beyond 2^53');
});

t.test('a large body with a bad row or broken JSON writes nothing', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const badRow = await raw(h.base, 'POST', ROWS, bigBody(12_000, ',{"entityId":["x"],"cells":{}}'), json);
  t.equal(badRow.status, 400);
  t.match(JSON.parse(badRow.body), { code: 'RG_ERR_BAD_ENTITY_ID', exception: /^row 12000: / });
  const broken = await raw(h.base, 'POST', ROWS, bigBody(12_000).slice(0, -50), json);
  t.equal(broken.status, 400);
  t.equal(JSON.parse(broken.body).code, 'RG_ERR_BAD_BODY');
  t.equal((await raw(h.base, 'GET', `${ROWS}?limit=-1`)).body, '', 'the table is still empty');
});

t.test('the body limit applies to streamed bodies, also without a content-length', async (t) => {
  const h = await startGateway({ limits: { bodyBytes: 1_500_000 } });
  t.teardown(() => h.close());
  const declared = await raw(h.base, 'POST', ROWS, bigBody(12_000), json);
  t.equal(declared.status, 413);
  const chunked = await raw(h.base, 'POST', ROWS, bigBody(12_000), { ...json, 'transfer-encoding': 'chunked' });
  t.equal(chunked.status, 413);
  t.equal(JSON.parse(chunked.body).code, 'RG_ERR_BODY_TOO_LARGE');
  t.equal((await raw(h.base, 'GET', '/v1')).status, 200, 'still serving');
});
