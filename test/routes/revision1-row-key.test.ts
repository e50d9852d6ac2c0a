/**
 * Revision 1 POST bodies may carry `rowKey` (KijiREST 0.4.0 rows had it: the hex row key beside
 * entityId) when it names the same row as entityId; a different row, bad hex or a non-string is
 * a 400 and nothing of the body is written. Revisions 2 and 3 never had it. Reads stay without it.
 */
import t from 'tap';
import { json, rowsOf } from '../support/fixture-tables.js';
import { startInProcess } from '../support/in-process.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
// [12345] in sample_table (one LONG, hash_size 2): the 0.4.0 documentation's example row key.
const KEY_12345 = '44018000000000003039';
const codeOf = (body: string) => (JSON.parse(body) as { code: string }).code;
const cells = (v: string) => ({ group_family: { string_qualifier: [{ timestamp: 5, value: v }] } });

t.test('revision 1: a 0.4.0 row with its rowKey is written back', async (t) => {
  const h = await startInProcess({ revision: 1 });
  t.teardown(() => h.close());
  const post = await h.raw('POST', ROWS, JSON.stringify({ entityId: '[12345]', rowKey: KEY_12345, cells: cells('some_value') }), json);
  t.equal(post.status, 200, post.body);
  t.same(JSON.parse(post.body), { targets: [`${ROWS}/${KEY_12345}`] });
  const upper = await h.raw(
    'POST',
    ROWS,
    JSON.stringify([
      { entityId: '[12345]', rowKey: KEY_12345.toUpperCase(), cells: cells('again') },
      { entityId: '[1]', cells: cells('no rowKey') },
    ]),
    json,
  );
  t.equal(upper.status, 200, `hex of either case, beside rows without it: ${upper.body}`);
  const got = await h.raw('GET', `${ROWS}/${KEY_12345}`);
  t.equal(got.status, 200);
  t.same(
    JSON.parse(got.body),
    { entityId: '[12345]', cells: { group_family: { string_qualifier: [{ timestamp: 5, value: 'again' }] } } },
    'reads stay as the specification shows them: no rowKey',
  );
  const scanned = rowsOf((await h.raw('GET', `${ROWS}?eid=[12345]`)).body) as Record<string, unknown>[];
  t.notOk('rowKey' in scanned[0]!);
});

t.test('revision 1: a rowKey naming another row, bad hex or not a string is refused, nothing written', async (t) => {
  const h = await startInProcess({ revision: 1 });
  t.teardown(() => h.close());
  const cases: [string, unknown, string, RegExp][] = [
    [
      'another row',
      '44018000000000003038',
      'RG_ERR_BAD_ENTITY_ID',
      /rowKey 44018000000000003038 and entityId \[12345\] name different rows \(the row key of that entityId is 44018000000000003039\)/,
    ],
    ['a prefix of the row key', '4401', 'RG_ERR_BAD_ENTITY_ID', /name different rows/],
    ['empty', '', 'RG_ERR_BAD_ENTITY_ID', /name different rows/],
    ['not hex', '4401zz', 'RG_ERR_BAD_ROW_KEY', /rowKey "4401zz" has a non-hex character "z"/],
    ['odd length', '440', 'RG_ERR_BAD_ROW_KEY', /odd number of hex digits/],
    ['a number', 12345, 'RG_ERR_BAD_BODY', /rowKey must be a string/],
    ['null', null, 'RG_ERR_BAD_BODY', /rowKey must be a string/],
  ];
  for (const [name, rowKey, code, message] of cases) {
    const body = [
      { entityId: '[7]', cells: cells('first') },
      { entityId: '[12345]', rowKey, cells: cells('x') },
    ];
    const r = await h.raw('POST', ROWS, JSON.stringify(body), json);
    t.equal(r.status, 400, name);
    t.equal(codeOf(r.body), code, name);
    t.match(JSON.parse(r.body).exception, message, name);
  }
  t.same((rowsOf((await h.raw('GET', `${ROWS}?eid=[7]`)).body) as { cells: object }[])[0]!.cells, {}, 'the good row before it was not written either');
});

for (const revision of [2, 3] as const) {
  t.test(`revision ${revision}: rowKey is an unknown row field`, async (t) => {
    const h = await startInProcess({ revision });
    t.teardown(() => h.close());
    const r = await h.raw('POST', ROWS, JSON.stringify({ entityId: revision === 3 ? [12345] : '[12345]', rowKey: KEY_12345, cells: cells('x') }), json);
    t.equal(r.status, 400);
    t.equal(codeOf(r.body), 'RG_ERR_BAD_BODY');
    t.match(JSON.parse(r.body).exception, /unknown row field "rowKey"/);
  });
}
