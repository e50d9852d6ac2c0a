/**
 * Large bodies (over 1 MiB, many TCP reads) are read row by row as they arrive: every row written,
 * the same errors, exact 64-bit integers, and the size limit enforced while reading. Run under
 * revisions 3 and 1 (entity ids as JSON arrays, then as shell strings); revision 2 shares
 * revision 1's parsing of bodies. (Every body takes one path: body-paths-agree.test.ts.)
 */
import t from 'tap';
import type { Revision } from '../../lib/config/config.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { json, raw, rowsOf, startGateway } from './harness.js';
import { FORMS, type Forms } from './suites/forms.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

function bigBody(f: Forms, count: number, extra = ''): string {
  const rows = Array.from(
    { length: count },
    (_, i) =>
      `{"entityId":${f.idJson([i])},"cells":{"strings":{"s":[{"value":"${'v'.repeat(100)}${i}","timestamp":7}]},"longs":{"l":[{"value":9007199254740993,"timestamp":7}]}}}`,
  );
  return `[${rows.join(',')}${extra}]`;
}

/** Bodies up to 1 MiB were once parsed whole, larger ones by another parser: these are larger. */
const WHOLE_PARSE_BYTES = 1024 * 1024;

// Revision 1 posts fewer rows (5,000: 1.19 MB, still streamed; 12,000 are 2.8 MB) to keep the
// added run time down: a streamed body costs ~0.3 ms of CPU per row to parse and validate.
const VARIANTS: { revision: Revision; rows: number; bodyBytes: number }[] = [
  { revision: 3, rows: 12_000, bodyBytes: 1_500_000 },
  { revision: 1, rows: 5_000, bodyBytes: 1_100_000 },
];

for (const { revision, rows: count, bodyBytes } of VARIANTS) {
  const f = FORMS[revision];
  const last = count - 1;
  const eid = (c: number[]) => encodeURIComponent(f.eid(c));

  t.test(`revision ${revision}: a ${count}-row array body (over 1 MiB) is streamed, validated and written whole`, async (t) => {
    const h = await startGateway({ revision });
    t.teardown(() => h.close());
    const body = bigBody(f, count);
    t.ok(body.length > WHOLE_PARSE_BYTES, `${body.length} bytes: above the whole-parse threshold`);
    const res = await raw(h.base, 'POST', ROWS, body, json);
    t.equal(res.status, 200, res.body.slice(0, 300));
    const targets = (JSON.parse(res.body) as { targets: string[] }).targets;
    t.equal(targets.length, count);
    const layout = await h.store.getLayout('default', 'sample_table');
    t.equal(targets[last], f.target(ROWS, [last], encodeRowKey(layout.keyFormat, [BigInt(last)]).toString('hex')));
    const [row] = rowsOf((await raw(h.base, 'GET', `${ROWS}?eid=${eid([last])}`)).body) as {
      entityId: unknown;
      cells: { strings: { s: { value: string }[] } };
    }[];
    t.same(row!.entityId, f.id([last]));
    t.equal(row!.cells.strings.s[0]!.value, `${'v'.repeat(100)}${last}`);
    t.match((await raw(h.base, 'GET', `${ROWS}?eid=${eid([last])}&cols=longs`)).body, /"value":9007199254740993[,}]/, 'exact beyond 2^53');
    t.equal(rowsOf((await raw(h.base, 'GET', `${ROWS}?cols=longs&limit=-1`)).body).length, count, 'every row was written');
  });

  t.test(`revision ${revision}: a large body with a bad row or broken JSON writes nothing`, async (t) => {
    const h = await startGateway({ revision });
    t.teardown(() => h.close());
    const badRow = await raw(h.base, 'POST', ROWS, bigBody(f, count, `,{"entityId":${f.idJson(['x'])},"cells":{}}`), json);
    t.equal(badRow.status, 400);
    t.match(JSON.parse(badRow.body), { code: 'RG_ERR_BAD_ENTITY_ID', exception: new RegExp(`^row ${count}: `) });
    const broken = await raw(h.base, 'POST', ROWS, bigBody(f, count).slice(0, -50), json);
    t.equal(broken.status, 400);
    t.equal(JSON.parse(broken.body).code, 'RG_ERR_BAD_BODY');
    t.equal((await raw(h.base, 'GET', `${ROWS}?limit=-1`)).body, '', 'the table is still empty');
  });

  t.test(`revision ${revision}: the body limit applies to streamed bodies, also without a content-length`, async (t) => {
    const h = await startGateway({ revision, limits: { bodyBytes } });
    t.teardown(() => h.close());
    const body = bigBody(f, count);
    t.ok(body.length > bodyBytes && bodyBytes > WHOLE_PARSE_BYTES, 'a body above the limit, which is above the whole-parse threshold');
    const declared = await raw(h.base, 'POST', ROWS, body, json);
    t.equal(declared.status, 413);
    t.equal(JSON.parse(declared.body).code, 'RG_ERR_BODY_TOO_LARGE');
    const chunked = await raw(h.base, 'POST', ROWS, body, { ...json, 'transfer-encoding': 'chunked' });
    t.equal(chunked.status, 413);
    t.equal(JSON.parse(chunked.body).code, 'RG_ERR_BODY_TOO_LARGE');
    t.equal((await raw(h.base, 'GET', `${ROWS}?limit=-1`)).body, '', 'nothing of the refused bodies was written');
    t.equal((await raw(h.base, 'GET', '/v1')).status, 200, 'still serving');
  });
}
