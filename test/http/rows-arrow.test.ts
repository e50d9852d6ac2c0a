/**
 * GET rows with Accept: application/vnd.apache.arrow.stream on the embedded store: a scan is an
 * Arrow IPC stream apache-arrow reads back with the same rows and values as the JSON scan (entity
 * ids, newest values, nulls for absent cells, the map families); limit ends it with the same trailers; versions=2 gives lists;
 * a point get answers one stream; the 406 names the new media type; a client gone mid-stream
 * releases the scan threads.
 */
import t from 'tap';
import { tableFromIPC } from 'apache-arrow';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import type { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { getBytes, leaveAfterFirstBytes, raw, SAMPLE_LAYOUT, scansSettled, startGateway } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const ARROW = { accept: 'application/vnd.apache.arrow.stream' };
const N = 700;

function rows(): RowWrite[] {
  const format = parseLayout(SAMPLE_LAYOUT).keyFormat;
  const out: RowWrite[] = [];
  for (let i = 0; i < N; i++) {
    out.push({
      rowKey: encodeRowKey(format, [BigInt(i) * 7n + 9007199254740993n]),
      cells: [
        ...(i % 5 === 0
          ? []
          : [
              {
                kind: 'value' as const,
                family: 'group_family',
                qualifier: 'string_qualifier',
                timestamp: 10 + i,
                schemaId: 0,
                json: JSON.stringify(`s ${i}\r\n`),
              },
            ]),
        { kind: 'value', family: 'group_family', qualifier: 'string_qualifier', timestamp: 5, schemaId: 0, json: '"older"' },
        { kind: 'value', family: 'group_family', qualifier: 'long_qualifier', timestamp: 3, schemaId: 3, json: String(9007199254740993n + BigInt(i)) },
        { kind: 'value', family: 'strings', qualifier: `q ${i % 4}`, timestamp: 1, schemaId: 0, json: '"m"' },
      ],
    });
  }
  return out;
}

type Doc = { entityId: unknown[]; cells: Record<string, Record<string, { timestamp: number; value: unknown }[]>> };

t.test('a scan as an Arrow stream reads back with the JSON scan values', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await h.store.write('default', 'sample_table', rows());
  // Parsed exactly: ids and longs beyond 2^53 are bigints.
  const json = (await raw(h.base, 'GET', `${ROWS}?limit=-1`)).body
    .split('\r\n')
    .filter((l) => l !== '')
    .map((l) => parseExactJson(l, 'row') as unknown as Doc);
  const got = await getBytes(h.base, `${ROWS}?limit=-1`, ARROW);
  t.equal(got.status, 200);
  t.equal(got.type, 'application/vnd.apache.arrow.stream');
  t.equal(got.trailers['x-rowgate-rows'], String(N));
  const table = tableFromIPC(got.body);
  t.equal(table.numRows, json.length);
  const arrow = table.toArray().map((r) => r.toJSON() as Record<string, unknown>);
  let compared = 0;
  json.forEach((doc, i) => {
    const a = arrow[i]!;
    const id = BigInt(String(doc.entityId[0]));
    const newest = doc.cells['group_family']?.['string_qualifier']?.[0]?.value ?? null;
    const long = doc.cells['group_family']?.['long_qualifier']?.[0]?.value;
    const map = Object.fromEntries(Object.entries(doc.cells['strings'] ?? {}).map(([q, cells]) => [q, cells[0]!.value]));
    const same =
      a['id'] === id &&
      a['group_family:string_qualifier'] === newest &&
      String(a['group_family:long_qualifier']) === String(long) &&
      a['group_family:union_qualifier'] === null &&
      JSON.stringify(Object.fromEntries([...(a['strings'] as Iterable<[string, unknown]>)])) === JSON.stringify(map);
    if (same) compared++;
    else t.fail(`row ${i} differs: ${JSON.stringify(doc)}`);
  });
  t.equal(compared, N, 'every row: entity id, newest value (null where absent), long beyond 2^53, map family');
});

t.test('limit, versions=2, a point get, and the 406 naming the media type', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await h.store.write('default', 'sample_table', rows().slice(0, 20));
  const limited = await getBytes(h.base, `${ROWS}?limit=7`, ARROW);
  t.equal(tableFromIPC(limited.body).numRows, 7);
  t.equal(limited.trailers['x-rowgate-rows'], '7');
  t.ok(limited.trailers['x-rowgate-next-start'], 'the next page is named');
  const two = tableFromIPC((await getBytes(h.base, `${ROWS}?limit=-1&versions=2`, ARROW)).body);
  const lists = two
    .toArray()
    .map((r) =>
      (r.toJSON() as Record<string, { toArray(): { toJSON(): { value: unknown } }[] }>)
        ['group_family:string_qualifier']!.toArray()
        .map((c) => c.toJSON().value),
    );
  t.ok(
    lists.some((l) => l.length === 2 && l[1] === 'older'),
    'newest first, two versions',
  );
  const point = await getBytes(h.base, `${ROWS}?eid=[9007199254740993]`, ARROW);
  t.equal(point.status, 200);
  t.equal(tableFromIPC(point.body).numRows, 1);
  const refused = await raw(h.base, 'GET', `${ROWS}?limit=1`, undefined, { accept: 'text/csv' });
  t.equal(refused.status, 406);
  t.match(refused.body, /application\/vnd\.apache\.arrow\.stream/);
});

t.test('a client that goes away mid-stream on the scan threads: the scan closes and no part is left', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const store = h.store as LmdbStore;
  // Small parts, and parallel from the first byte, so 700 rows are many parts on the scan threads.
  store.parallelScan.minBytes = 0;
  store.parallelScan.partBytes = 1024;
  await store.write('default', 'sample_table', rows());
  const before = store.scanPool!.partsSubmitted;
  await leaveAfterFirstBytes(h.base, `${ROWS}?limit=-1&versions=all`, ARROW);
  t.ok(store.scanPool!.partsSubmitted > before, 'the scan ran on the scan threads');
  await scansSettled(store);
  t.equal(store.openScans, 0, 'the scan is closed');
  t.equal(store.scanPool!.busy, 0, 'no part left on the scan threads');
});
