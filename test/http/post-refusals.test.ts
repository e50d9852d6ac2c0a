/**
 * POSTs that used to be answered 200 while ignoring part of what they asked for: a family that
 * does not exist named with an empty map (alone, and among valid rows, whose cells were written),
 * a column that does not exist with an empty list of cells, a counter cell with a writer_schema
 * that is not "long" (ignored), and a body declared in a charset other than UTF-8 (decoded as
 * UTF-8). Each is now a 400 or 415 naming the problem, with nothing written; under every revision
 * (revision 1 has no writer_schema on POST; its PUT's schema.<column> is checked the same way).
 */
import t from 'tap';
import type { Revision } from '../../lib/config/config.js';
import { json, raw, startGateway } from './harness.js';
import { FORMS } from './suites/forms.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

interface ErrorBody {
  code: string;
  exception: string;
  status: number;
}

for (const revision of [1, 2, 3] as Revision[]) {
  const f = FORMS[revision];
  const row = (id: number, cells: unknown) => ({ entityId: f.id([id]), cells });
  const valid = (id: number) => row(id, { group_family: { string_qualifier: [{ value: `v${id}`, timestamp: 5 }] } });

  t.test(`revision ${revision}: what used to be ignored is refused, naming it, and nothing is written`, async (t) => {
    const h = await startGateway({ revision });
    t.teardown(() => h.close());
    const post = async (body: unknown, headers: Record<string, string> = json) => {
      const res = await raw(h.base, 'POST', ROWS, typeof body === 'string' ? body : JSON.stringify(body), headers);
      return { status: res.status, error: res.status === 200 ? undefined : (JSON.parse(res.body) as ErrorBody) };
    };
    const cases: [string, unknown, number, string, RegExp][] = [
      [
        'a family that does not exist, with an empty map',
        row(1, { nofam: {} }),
        400,
        'RG_ERR_UNKNOWN_COLUMN',
        /^row 0: Specified family does not exist: nofam$/,
      ],
      [
        'the same among valid rows',
        [valid(2), row(3, { nofam: {} }), valid(4)],
        400,
        'RG_ERR_UNKNOWN_COLUMN',
        /^row 1: Specified family does not exist: nofam$/,
      ],
      [
        'an unknown family beside a valid one',
        row(5, { group_family: { string_qualifier: [{ value: 'x', timestamp: 5 }] }, nofam: {} }),
        400,
        'RG_ERR_UNKNOWN_COLUMN',
        /^row 0: Specified family does not exist: nofam$/,
      ],
      [
        'a column that does not exist, with no cells',
        [valid(6), row(7, { group_family: { nope: [] } })],
        400,
        'RG_ERR_UNKNOWN_COLUMN',
        /^row 1: Specified column does not exist: group_family:nope$/,
      ],
      [
        'a family that does not exist, with a column with no cells',
        row(8, { nofam: { q: [] } }),
        400,
        'RG_ERR_UNKNOWN_COLUMN',
        /^row 0: Specified column does not exist: nofam:q$/,
      ],
    ];
    if (revision !== 1) {
      cases.push(
        [
          'a counter written with writer_schema "string"',
          [valid(9), row(10, { group_family: { counter: [{ value: 5, timestamp: 1, writer_schema: 'string' }] } })],
          400,
          'RG_ERR_BAD_SCHEMA',
          /^row 1: writer_schema of counter column group_family:counter must be "long" \(schema id 3\) or absent: a counter is a 64-bit integer, got "string"$/,
        ],
        [
          'a counter increment with writer_schema 0 (the id of "string")',
          row(11, { group_family: { counter: [{ value: { incr: 1 }, writer_schema: 0 }] } }),
          400,
          'RG_ERR_BAD_SCHEMA',
          /^row 0: writer_schema of counter column group_family:counter must be "long" .* got 0$/,
        ],
      );
    }
    for (const [what, body, status, code, message] of cases) {
      const res = await post(body);
      t.equal(res.status, status, what);
      t.match(res.error, { code, status, exception: message }, what);
    }
    for (const charset of ['latin1', 'ISO-8859-1', '"utf-16"', 'us-ascii']) {
      const res = await post([valid(12)], { 'content-type': `application/json; charset=${charset}` });
      t.equal(res.status, 415, `charset=${charset}`);
      t.match(res.error, {
        code: 'RG_ERR_UNSUPPORTED_MEDIA_TYPE',
        exception: `request body must be UTF-8 JSON: charset ${JSON.stringify(charset.replaceAll('"', '').toLowerCase())} is not supported (send charset=utf-8, or no charset)`,
      });
    }
    // A latin1 body that happens to be valid UTF-8 too would have been stored as UTF-8 text.
    const latin = Buffer.from(JSON.stringify(row(13, { group_family: { string_qualifier: [{ value: 'caf\u00e9', timestamp: 5 }] } })), 'latin1');
    const latinRes = await raw(h.base, 'POST', ROWS, latin, { 'content-type': 'application/json; charset=latin1' });
    t.equal(latinRes.status, 415, 'a latin1 body');
    t.equal((await raw(h.base, 'GET', `${ROWS}?limit=-1`)).body, '', 'nothing was written by any of them');

    // What stays accepted.
    t.equal((await post(row(20, { strings: {}, group_family: { string_qualifier: [] } }))).status, 200, 'an existing family or column with no cells');
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
      t.equal((await post([valid(21)], { 'content-type': `application/json;charset=${charset}` })).status, 200, `charset=${charset}`);
    }
    t.equal((await post([valid(22)], { 'content-type': 'application/json; foo=bar' })).status, 200, 'other parameters are ignored');
    if (revision !== 1) {
      for (const writerSchema of [3, 'long', { type: 'long' }]) {
        t.equal(
          (await post(row(23, { group_family: { counter: [{ value: 1, timestamp: 1, writer_schema: writerSchema }] } }))).status,
          200,
          `a counter with writer_schema ${JSON.stringify(writerSchema)}`,
        );
      }
    }
  });
}

t.test('revision 1: PUT takes a counter\'s schema.<column> only as "long"', async (t) => {
  const h = await startGateway({ revision: 1 });
  t.teardown(() => h.close());
  const layout = await h.store.getLayout('default', 'sample_table');
  const { encodeRowKey } = await import('../../lib/model/keys/row-key.js');
  const hex = encodeRowKey(layout.keyFormat, [30n]).toString('hex');
  const put = (schema: string) =>
    raw(h.base, 'PUT', `${ROWS}/${hex}?timestamp=5&group_family:counter=7&schema.group_family:counter=${encodeURIComponent(schema)}`);
  const bad = await put('"string"');
  t.equal(bad.status, 400);
  t.match(JSON.parse(bad.body), { code: 'RG_ERR_BAD_SCHEMA', exception: /^writer_schema of counter column group_family:counter must be "long"/ });
  t.equal((await raw(h.base, 'GET', `${ROWS}/${hex}`)).body, JSON.stringify({ entityId: '[30]', cells: {} }), 'nothing written');
  t.equal((await put('"long"')).status, 200);
});
