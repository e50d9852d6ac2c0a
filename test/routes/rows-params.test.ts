/**
 * GET/POST/DELETE rows parameters not covered elsewhere, checked in process against the LMDB store:
 * the default scan limit (100), `end_eid` alone, `cols=*`, server timestamps on POST, the
 * visible-instances rule on writes, and RG_ERR_ROW_KEY_TOO_LONG for a URL entity id.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { json, RAW_TABLE_LAYOUT, rowsOf, SAMPLE_LAYOUT } from '../support/fixture-tables.js';
import { startInProcess, type InProcessGateway } from '../support/in-process.js';

const SAMPLE = '/v1/instances/default/tables/sample_table/rows';
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
const codeOf = (body: string) => (JSON.parse(body) as { code: string }).code;

type Cell = { timestamp: number; value: unknown };
type Row = { entityId: number[]; cells: Record<string, Record<string, Cell[]>> };

/** The row key of [n] in sample_table (FORMATTED, one LONG, hash_size 2), computed independently of lib/. */
function longKey(n: number): Buffer {
  const value = Buffer.alloc(8);
  value.writeBigUInt64BE(BigInt.asUintN(64, BigInt(n)) ^ (1n << 63n));
  return Buffer.concat([createHash('md5').update(value).digest().subarray(0, 2), value]);
}

t.test('scans: the default limit is 100, end_eid alone is an exclusive upper bound, cols=* selects every family', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const ids = Array.from({ length: 150 }, (_, i) => i * 7 + 1);
  const body = ids.map((id) => ({
    entityId: [id],
    cells: { longs: { n: [{ value: id, timestamp: 1 }] }, strings: { s: [{ value: `row ${id}`, timestamp: 2 }] } },
  }));
  t.equal((await h.raw('POST', SAMPLE, JSON.stringify(body), json)).status, 200);
  const inKeyOrder = [...ids].sort((a, b) => Buffer.compare(longKey(a), longKey(b)));

  const byDefault = await h.raw('GET', SAMPLE);
  t.equal(byDefault.status, 200);
  const firstHundred = rowsOf(byDefault.body) as Row[];
  t.equal(firstHundred.length, 100, 'GET rows without limit returns 100 of the 150 rows');
  t.same(
    firstHundred.map((r) => r.entityId[0]),
    inKeyOrder.slice(0, 100),
    'the first 100 in row-key order',
  );
  t.equal(rowsOf((await h.raw('GET', `${SAMPLE}?limit=-1`)).body).length, 150, 'limit=-1 returns all 150');

  // end_eid alone: every row before the bound (the bound's own row excluded), in row-key order.
  const bound = inKeyOrder[40]!;
  const before = rowsOf((await h.raw('GET', `${SAMPLE}?end_eid=${q([bound])}`)).body) as Row[];
  t.same(
    before.map((r) => r.entityId[0]),
    inKeyOrder.slice(0, 40),
    `end_eid=[${bound}] alone returns the 40 rows before it`,
  );
  const hexBound = longKey(inKeyOrder[120]!).toString('hex');
  const beforeHex = rowsOf((await h.raw('GET', `${SAMPLE}?end_eid=${q(`rowkey_hex=${hexBound}`)}&limit=-1`)).body) as Row[];
  t.same(
    beforeHex.map((r) => r.entityId[0]),
    inKeyOrder.slice(0, 120),
    'end_eid in the rowkey_hex form, limit=-1: the 120 rows before it',
  );
  const beforeHexDefault = rowsOf((await h.raw('GET', `${SAMPLE}?end_eid=${q(`rowkey_hex=${hexBound}`)}`)).body);
  t.equal(beforeHexDefault.length, 100, 'end_eid alone still gets the default limit of 100');

  // cols=* is every family, the same as no cols at all.
  const star = await h.raw('GET', `${SAMPLE}?cols=*&limit=-1`);
  t.equal(star.status, 200, star.body.slice(0, 200));
  const all = await h.raw('GET', `${SAMPLE}?limit=-1`);
  t.equal(star.body, all.body, 'cols=* returns exactly what no cols returns');
  const starRows = rowsOf(star.body) as Row[];
  t.equal(starRows.length, 150);
  t.ok(
    starRows.every((r) => Object.keys(r.cells).join() === 'longs,strings'),
    'each row has both families',
  );
  const pointStar = rowsOf((await h.raw('GET', `${SAMPLE}?eid=${q([8])}&cols=*`)).body) as Row[];
  t.same(
    pointStar[0]?.cells,
    { longs: { n: [{ timestamp: 1, value: 8, writer_schema: 3 }] }, strings: { s: [{ timestamp: 2, value: 'row 8', writer_schema: 0 }] } },
    'cols=* on a point get',
  );
  const narrowed = rowsOf((await h.raw('GET', `${SAMPLE}?eid=${q([8])}&cols=strings`)).body) as Row[];
  t.same(Object.keys(narrowed[0]!.cells), ['strings'], 'whereas cols=strings narrows');
});

t.test('POST without timestamp: the server time, shared by every cell of one row', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const before = Date.now();
  const res = await h.raw(
    'POST',
    SAMPLE,
    JSON.stringify([
      {
        entityId: [1],
        cells: {
          group_family: { string_qualifier: [{ value: 'a' }], long_qualifier: [{ value: 5 }] },
          strings: { x: [{ value: 'b' }], y: [{ value: 'c' }] },
          longs: { z: [{ value: 7 }] },
        },
      },
      { entityId: [2], cells: { strings: { x: [{ value: 'd' }] }, longs: { z: [{ value: 8, timestamp: 42 }] } } },
    ]),
    json,
  );
  const after = Date.now();
  t.equal(res.status, 200, res.body);
  const rows = rowsOf((await h.raw('GET', `${SAMPLE}?eids=${q([[1], [2]])}`)).body) as Row[];
  const stamps = (row: Row) => Object.values(row.cells).flatMap((f) => Object.values(f).flatMap((cells) => cells.map((c) => c.timestamp)));
  const first = stamps(rows[0]!);
  t.equal(first.length, 5, 'five cells written');
  t.equal(new Set(first).size, 1, `one timestamp for every cell of the row: ${first.join(', ')}`);
  t.ok(first[0]! >= before && first[0]! <= after, `the server time of the write (${first[0]} within ${before}..${after})`);
  const second = rows[1]!;
  t.equal(second.cells.longs!.z![0]!.timestamp, 42, 'an explicit timestamp is kept');
  const x = second.cells.strings!.x![0]!.timestamp;
  t.ok(x >= before && x <= after, 'a cell without one in the same row gets the server time');
});

t.test('visible instances: POST and DELETE to a hidden instance are 404 RG_ERR_INSTANCE_NOT_FOUND and change nothing', async (t) => {
  const h = await startInProcess({ instances: ['default'] });
  t.teardown(() => h.close());
  // The hidden instance has the same table, so only the visibility rule stands in the way.
  await h.store.createTable('hidden', parseLayout(SAMPLE_LAYOUT));
  const layout = await h.store.getLayout('hidden', 'sample_table');
  const key = longKey(5);
  await h.store.write('hidden', 'sample_table', [
    { rowKey: key, cells: [{ kind: 'value', family: 'strings', qualifier: 'kept', timestamp: 1, schemaId: 0, json: '"stored directly"' }] },
  ]);
  t.ok(layout, 'hidden/sample_table exists in the store');
  const HIDDEN = '/v1/instances/hidden/tables/sample_table/rows';
  const row = { entityId: [5], cells: { strings: { posted: [{ value: 'nope', timestamp: 2 }] } } };

  const post = await h.raw('POST', HIDDEN, JSON.stringify(row), json);
  t.equal(post.status, 404, post.body);
  t.equal(codeOf(post.body), 'RG_ERR_INSTANCE_NOT_FOUND');
  t.match(JSON.parse(post.body), { status: 404, exceptionName: String });
  const del = await h.raw('DELETE', `${HIDDEN}?eid=${q([5])}`);
  t.equal(del.status, 404, del.body);
  t.equal(codeOf(del.body), 'RG_ERR_INSTANCE_NOT_FOUND');
  const delMany = await h.raw('DELETE', `${HIDDEN}?eids=${q([[5], [6]])}`);
  t.equal(delMany.status, 404);
  t.equal(codeOf(delMany.body), 'RG_ERR_INSTANCE_NOT_FOUND');

  const [stored] = await h.store.get('hidden', 'sample_table', [key], { maxVersions: 10, minTimestamp: 0, maxTimestamp: Number.MAX_SAFE_INTEGER });
  t.same(
    stored!.cells.map((c) => c.qualifier),
    ['kept'],
    'the hidden row was neither written nor deleted',
  );
  const visible = await h.raw('POST', SAMPLE, JSON.stringify(row), json);
  t.equal(visible.status, 200, 'the same POST to the visible instance succeeds');
  t.equal((await h.raw('DELETE', `${SAMPLE}?eid=${q([5])}`)).status, 200, 'and so does the DELETE');
});

t.test('a URL entity id longer than the store accepts is 400 RG_ERR_ROW_KEY_TOO_LONG on a RAW table', async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  await h.store.createTable('default', parseLayout(RAW_TABLE_LAYOUT));
  const RAW_ROWS = '/v1/instances/default/tables/raw_table/rows';
  const max = h.store.maxRowKeyBytes;
  t.ok(max > 0 && max * 2 + 100 < 16 * 1024, `the store's limit (${max} bytes) fits a hex URL under the URL limit`);

  const atLimit = await h.raw('GET', `${RAW_ROWS}?eid=${q(`rowkey_hex=${'61'.repeat(max)}`)}`);
  t.equal(atLimit.status, 200, `a ${max}-byte key is fine: ${atLimit.body.slice(0, 200)}`);
  t.same((rowsOf(atLimit.body)[0] as { cells: object }).cells, {}, 'a missing row with empty cells');

  for (const [what, eid] of [
    ['rowkey_hex', `rowkey_hex=${'61'.repeat(max + 1)}`],
    ['rowkey', `rowkey=${'a'.repeat(max + 1)}`],
    ['hbase_hex', `hbase_hex=${'ff'.repeat(max + 1)}`],
    ['JSON array', JSON.stringify(['a'.repeat(max + 1)])],
  ] as const) {
    const res = await h.raw('GET', `${RAW_ROWS}?eid=${q(eid)}`);
    t.equal(res.status, 400, `GET eid in the ${what} form, ${max + 1} bytes`);
    const body = JSON.parse(res.body) as { code: string; status: number; exception: string };
    t.equal(body.code, 'RG_ERR_ROW_KEY_TOO_LONG', what);
    t.equal(body.status, 400);
    t.ok(body.exception.includes(String(max + 1)) && body.exception.includes(String(max)), `the message names the size and the limit: ${body.exception}`);
  }
  const del = await h.raw('DELETE', `${RAW_ROWS}?eid=${q(`rowkey_hex=${'61'.repeat(max + 1)}`)}`);
  t.equal(del.status, 400, 'DELETE eid too');
  t.equal(codeOf(del.body), 'RG_ERR_ROW_KEY_TOO_LONG');
  const bulk = await h.raw('GET', `${RAW_ROWS}?eids=${q([`rowkey_hex=${'61'.repeat(max + 1)}`])}`);
  t.equal(bulk.status, 400, 'an eids element too');
  t.equal(codeOf(bulk.body), 'RG_ERR_ROW_KEY_TOO_LONG');
  const start = await h.raw('GET', `${RAW_ROWS}?start_eid=${q(`rowkey_hex=${'61'.repeat(max + 1)}`)}`);
  t.equal(start.status, 400, 'and a start_eid bound');
  t.equal(codeOf(start.body), 'RG_ERR_ROW_KEY_TOO_LONG');
  const post = await h.raw(
    'POST',
    RAW_ROWS,
    JSON.stringify({ entityId: `rowkey_hex=${'61'.repeat(max + 1)}`, cells: { info: { q: [{ value: 'x', timestamp: 1 }] } } }),
    json,
  );
  t.equal(post.status, 400, `a POSTed entityId too: ${post.body}`);
  t.equal(codeOf(post.body), 'RG_ERR_ROW_KEY_TOO_LONG');
});
