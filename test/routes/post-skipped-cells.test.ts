/**
 * POST cells with timestamp -1 are skipped and the rest of the row written, as KijiREST did
 * (0.4.0-1.4.0): it wrote -1 on cells it could not decode, and the Ruby client keeps them when it
 * strips timestamps so that a row read and written back round-trips. A skipped cell's value is not
 * read, its column must exist; any other negative timestamp is still a 400. All three revisions.
 */
import t from 'tap';
import { json, rowsOf } from '../support/fixture-tables.js';
import { startInProcess } from '../support/in-process.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
type Row = { entityId: unknown; cells: Record<string, Record<string, { timestamp: number; value: unknown }[]>> };
const codeOf = (body: string) => (JSON.parse(body) as { code: string }).code;

for (const revision of [1, 2, 3] as const) {
  const eid = (n: number) => (revision === 3 ? [n] : `[${n}]`);

  t.test(`revision ${revision}: -1 cells skipped, the rest of the row written`, async (t) => {
    const h = await startInProcess({ revision });
    t.teardown(() => h.close());
    const body = {
      entityId: eid(1),
      cells: {
        group_family: {
          string_qualifier: [
            { value: 'kept', timestamp: 10 },
            { value: 'skipped', timestamp: -1 },
          ],
          // What KijiREST wrote for a cell it could not decode: not a long, and never read.
          long_qualifier: [{ value: 'Error loading cell: no class Team', timestamp: -1 }],
          counter: [{ value: { incr: 5 }, timestamp: -1 }],
        },
        longs: { n: [{ value: 7, timestamp: 3 }] },
      },
    };
    const post = await h.raw('POST', ROWS, JSON.stringify(body), json);
    t.equal(post.status, 200, post.body);
    const got = await h.raw('GET', `${ROWS}?eid=[1]&versions=all`);
    const [row] = rowsOf(got.body) as Row[];
    t.same(Object.keys(row!.cells), ['group_family', 'longs']);
    t.same(Object.keys(row!.cells.group_family!), ['string_qualifier'], 'nothing of the -1 columns was written');
    t.same(
      row!.cells.group_family!.string_qualifier!.map((c) => [c.timestamp, c.value]),
      [[10, 'kept']],
    );
    t.same(
      row!.cells.longs!.n!.map((c) => [c.timestamp, c.value]),
      [[3, 7]],
    );

    // A row whose only cells are -1 is accepted and writes nothing.
    const only = await h.raw('POST', ROWS, JSON.stringify([{ entityId: eid(2), cells: { strings: { a: [{ value: 1, timestamp: -1 }] } } }]), json);
    t.equal(only.status, 200, only.body);
    t.same((rowsOf((await h.raw('GET', `${ROWS}?eid=[2]`)).body) as Row[])[0]!.cells, {}, 'the row has no cells');
  });

  t.test(`revision ${revision}: other negative timestamps and unknown -1 columns are 400s`, async (t) => {
    const h = await startInProcess({ revision });
    t.teardown(() => h.close());
    const cases: [string, unknown, string, RegExp][] = [
      [
        '-2',
        { group_family: { string_qualifier: [{ value: 'a', timestamp: -2 }] } },
        'RG_ERR_BAD_TIMESTAMP',
        /timestamp of column group_family:string_qualifier must be an integer of milliseconds from 0 to 9223372036854775807, got -2/,
      ],
      [
        '-9223372036854775808',
        { group_family: { string_qualifier: [{ value: 'a', timestamp: '@min@' }] } },
        'RG_ERR_BAD_TIMESTAMP',
        /must be an integer of milliseconds from 0 to 9223372036854775807, got -9223372036854775808/,
      ],
      [
        '-1 in an unknown column',
        { group_family: { nope: [{ value: 'a', timestamp: -1 }] } },
        'RG_ERR_UNKNOWN_COLUMN',
        /Specified column does not exist: group_family:nope/,
      ],
      ['-1 in an unknown family', { nofam: { q: [{ value: 'a', timestamp: -1 }] } }, 'RG_ERR_UNKNOWN_COLUMN', /nofam:q/],
      [
        '-1 with an unknown cell field',
        { group_family: { string_qualifier: [{ value: 'a', timestamp: -1, colour: 'red' }] } },
        'RG_ERR_BAD_BODY',
        /unknown field "colour"/,
      ],
      ['-1 as a string', { group_family: { string_qualifier: [{ value: 'a', timestamp: '-1' }] } }, 'RG_ERR_BAD_TIMESTAMP', /got "-1"/],
    ];
    for (const [name, cells, code, message] of cases) {
      const text = JSON.stringify({ entityId: eid(3), cells: { ...(cells as object), longs: { n: [{ value: 1, timestamp: 1 }] } } }).replace(
        '"@min@"',
        '-9223372036854775808',
      );
      const r = await h.raw('POST', ROWS, text, json);
      t.equal(r.status, 400, name);
      t.equal(codeOf(r.body), code, name);
      t.match(JSON.parse(r.body).exception, message, name);
    }
    t.equal((await h.raw('GET', `${ROWS}?eid=[3]`)).body.includes('"longs"'), false, 'nothing of a refused body was written');
  });
}

t.test("a row read and written back with -1 cells kept (the Ruby client's strip_timestamp) round-trips", async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const first = { entityId: [4], cells: { strings: { a: [{ value: 'x', timestamp: 100 }] }, longs: { n: [{ value: 9, timestamp: 100 }] } } };
  t.equal((await h.raw('POST', ROWS, JSON.stringify(first), json)).status, 200);
  const [row] = rowsOf((await h.raw('GET', `${ROWS}?eid=[4]`)).body) as Row[];
  // A cell KijiREST could not decode comes back with -1; strip every other timestamp and post it back.
  (row!.cells.strings as Record<string, unknown[]>).b = [{ timestamp: -1, value: 'Error loading cell: x', writer_schema: 0 }];
  for (const family of Object.values(row!.cells)) {
    for (const cells of Object.values(family)) for (const c of cells as { timestamp?: number }[]) if (c.timestamp !== -1) delete c.timestamp;
  }
  const back = await h.raw('POST', ROWS, JSON.stringify(row), json);
  t.equal(back.status, 200, back.body);
  t.same(JSON.parse(back.body), { targets: ['/v1/instances/default/tables/sample_table/rows?eid=%5B4%5D'] });
  const [after] = rowsOf((await h.raw('GET', `${ROWS}?eid=[4]&versions=all`)).body) as Row[];
  t.same(Object.keys(after!.cells.strings!), ['a'], 'the -1 cell was not written');
  t.equal(after!.cells.strings!.a!.length, 2, 'the stripped cell was written again at server time');
});
