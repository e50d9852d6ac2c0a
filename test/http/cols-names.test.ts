/**
 * `cols` can name every column a POST can store: map-family qualifiers holding a comma, starting or
 * ending with whitespace, or empty are read and deleted one by one with the JSON form
 * (`cols=["family:qualifier"]`), while the plain comma-separated form KijiREST's clients send
 * (Ruby: the whole value percent-encoded; Python: nothing encoded) keeps working. A DELETE's plain
 * `family:` of a map family is refused rather than read as the whole family. On the LMDB store, and
 * on Bigtable over a cbtemulator this file starts (skipped, saying what is missing, without it).
 */
import t, { type Test } from 'tap';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import type { Store } from '../../lib/store/store.js';
import { EMULATOR_MISSING, startEmulator } from '../store/bigtable-emulator.js';
import { json, raw, rowsOf, startGateway } from './harness.js';

const SAMPLE = '/v1/instances/default/tables/sample_table/rows';
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
const EID = `eid=${q([7])}`;

type Cells = Record<string, Record<string, { value: unknown }[]>>;

/** Qualifiers the plain form cannot name, and ordinary ones beside them. */
const AWKWARD = ['tab\t', 'a,b', '', ' lead', 'trail ', 'x:y', 'plus+sign', '[bracket', 'a%2Cb', 'plain'];

/** Writes every AWKWARD qualifier, then reads and deletes each on its own. */
async function everyQualifier(t: Test, base: string): Promise<void> {
  const strings = Object.fromEntries(AWKWARD.map((qualifier, i) => [qualifier, [{ value: `v${i}`, timestamp: 5 }]]));
  const post = await raw(
    base,
    'POST',
    SAMPLE,
    JSON.stringify({ entityId: [7], cells: { strings, group_family: { string_qualifier: [{ value: 's', timestamp: 5 }] } } }),
    json,
  );
  t.equal(post.status, 200, post.body);
  const cellsOf = async (cols?: string): Promise<Cells | undefined> => {
    const res = await raw(base, 'GET', `${SAMPLE}?${EID}${cols === undefined ? '' : `&cols=${cols}`}`);
    t.equal(res.status, 200, `GET cols=${cols}: ${res.body.slice(0, 200)}`);
    return res.status === 200 ? (rowsOf(res.body)[0] as { cells: Cells }).cells : undefined;
  };
  t.same(Object.keys((await cellsOf())?.strings ?? {}).sort(), [...AWKWARD].sort(), 'every qualifier was stored');

  for (const [i, qualifier] of AWKWARD.entries()) {
    t.same(
      await cellsOf(q([`strings:${qualifier}`])),
      { strings: { [qualifier]: [{ timestamp: 5, value: `v${i}`, writer_schema: 0 }] } },
      `GET names ${JSON.stringify(qualifier)} alone`,
    );
  }
  t.same(Object.keys((await cellsOf(q(['strings:a,b', 'strings:tab\t'])))?.strings ?? {}).sort(), ['a,b', 'tab\t'], 'two awkward names in one JSON list');

  // Delete them one at a time: each DELETE removes exactly its column.
  const left = new Set(AWKWARD);
  for (const qualifier of AWKWARD) {
    const del = await raw(base, 'DELETE', `${SAMPLE}?${EID}&cols=${q([`strings:${qualifier}`])}`);
    t.equal(del.status, 200, `DELETE ${JSON.stringify(qualifier)}: ${del.body}`);
    left.delete(qualifier);
    const cells = await cellsOf();
    t.same(Object.keys(cells?.strings ?? {}).sort(), [...left].sort(), `DELETE removed ${JSON.stringify(qualifier)} and nothing else`);
    t.ok(cells?.group_family?.string_qualifier, 'the other family is untouched');
  }
}

const emulator = await startEmulator();
if (emulator) t.teardown(() => emulator.stop());
let tables = 0;
/** The stores to run on: a fresh one per call (LMDB: the harness's own). */
const STORES: [string, (() => Promise<Store>) | undefined][] = [
  ['LMDB', undefined],
  ['Bigtable', emulator ? () => BigtableStore.open({ projectId: 'test', instanceId: 'cols', tablePrefix: `cols${tables++}` }) : undefined],
];

for (const [name, open] of STORES) {
  t.test(
    `${name}: every stored map-family qualifier can be read and deleted on its own with the JSON form of cols`,
    { skip: name === 'Bigtable' && !emulator ? EMULATOR_MISSING : false },
    async (t) => {
      const h = await startGateway({}, open ? { store: await open() } : {});
      t.teardown(() => h.close());
      await everyQualifier(t, h.base);
    },
  );
}

t.test('the plain form: KijiREST clients\' comma lists, "family:" as the family on GET and refused on DELETE', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  const cells = {
    strings: { '': [{ value: 'empty', timestamp: 5 }], other: [{ value: 'other', timestamp: 5 }] },
    group_family: { string_qualifier: [{ value: 's', timestamp: 5 }], long_qualifier: [{ value: 9, timestamp: 5 }] },
  };
  t.equal((await raw(h.base, 'POST', SAMPLE, JSON.stringify({ entityId: [7], cells }), json)).status, 200);
  const get = async (cols: string) => {
    const res = await raw(h.base, 'GET', `${SAMPLE}?${EID}&cols=${cols}`);
    return { status: res.status, cells: res.status === 200 ? (rowsOf(res.body)[0] as { cells: Cells }).cells : undefined, body: res.body };
  };
  const ruby = await get(encodeURIComponent('group_family:string_qualifier,strings:other'));
  t.same(Object.keys(ruby.cells ?? {}), ['group_family', 'strings'], 'Ruby gem (value CGI-encoded, %2C between columns): two columns');
  t.same(Object.keys(ruby.cells?.strings ?? {}), ['other']);
  const python = await get('group_family:string_qualifier,strings:other');
  t.same(python.cells, ruby.cells, 'Python client (nothing encoded): the same two columns');
  const spaced = await get(encodeURIComponent('group_family:string_qualifier, strings:other'));
  t.same(spaced.cells, ruby.cells, 'items are trimmed');
  const family = await get('strings:');
  t.same(Object.keys(family.cells?.strings ?? {}).sort(), ['', 'other'], 'GET cols=strings: is the whole family (Kiji reads "family:" as the family)');

  const ambiguous = await raw(h.base, 'DELETE', `${SAMPLE}?${EID}&cols=strings:`);
  t.equal(ambiguous.status, 400);
  t.match(JSON.parse(ambiguous.body), { code: 'RG_ERR_BAD_COLUMNS', exception: /"strings:" is ambiguous in a DELETE/ });
  t.same(Object.keys((await get('strings')).cells?.strings ?? {}).sort(), ['', 'other'], 'the refused DELETE removed nothing');
  const mixed = await raw(h.base, 'DELETE', `${SAMPLE}?${EID}&cols=strings:other,*`);
  t.equal(mixed.status, 400, '* among other columns in a DELETE');
  t.equal(JSON.parse(mixed.body).code, 'RG_ERR_BAD_COLUMNS');

  t.equal(
    (await raw(h.base, 'DELETE', `${SAMPLE}?${EID}&cols=group_family:`)).status,
    200,
    'a group family has no empty qualifier: group_family: deletes the family',
  );
  t.same(Object.keys((await get('*')).cells ?? {}), ['strings'], 'the group family is gone, the map family stays');
  t.equal((await raw(h.base, 'DELETE', `${SAMPLE}?${EID}&cols=strings`)).status, 200);
  t.same((await get('*')).cells, {}, 'cols=strings deletes the whole map family');
});
