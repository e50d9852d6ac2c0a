/**
 * The freshening parameters KijiREST 0.6.0+ declared on GET rows (freshen, timeout, fresh.<key>):
 * accepted under revisions 2 and 3 on every form of GET rows (and HEAD), their values checked,
 * the stored cells returned (the same bytes as without them), and a request asking for
 * freshening told so by X-Rowgate-Freshening; refused under revision 1, which had none; other
 * unknown parameters stay a 400.
 */
import t from 'tap';
import { json } from '../support/fixture-tables.js';
import { startInProcess } from '../support/in-process.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const HEADER = 'x-rowgate-freshening';
const codeOf = (body: string) => (JSON.parse(body) as { code: string }).code;

for (const revision of [2, 3] as const) {
  t.test(`revision ${revision}: freshen, timeout and fresh.* accepted, stored cells returned`, async (t) => {
    const h = await startInProcess({ revision });
    t.teardown(() => h.close());
    const eid = revision === 3 ? [7] : '[7]';
    const post = await h.raw('POST', ROWS, JSON.stringify({ entityId: eid, cells: { strings: { q: [{ value: 'stored', timestamp: 5 }] } } }), json);
    t.equal(post.status, 200, post.body);

    const plain = await h.raw('GET', `${ROWS}?eid=[7]&timerange=0..&versions=10`);
    t.equal(plain.status, 200);
    t.equal(plain.headers[HEADER], undefined, 'no freshening asked, nothing said');
    // The JMeter GetRequestSampler's request (brackets unencoded), both plans.
    for (const freshen of ['false', 'true']) {
      const r = await h.raw('GET', `${ROWS}?eid=[7]&timerange=0..&versions=10&freshen=${freshen}`);
      t.equal(r.status, 200, `freshen=${freshen}: ${r.body}`);
      t.equal(r.body, plain.body, `freshen=${freshen} returns the stored cells`);
      t.equal(r.headers[HEADER], freshen === 'true' ? 'none (stored cells: rowgate runs no fresheners)' : undefined, `freshen=${freshen}: header`);
    }
    const asked = [
      'freshen=TRUE',
      'timeout=100',
      'freshen=true&timeout=0',
      'fresh.power=200',
      // KijiREST's own test sends the key percent-encoded.
      '%66%72%65%73%68%2E%70%6F%77%65%72=200',
      'fresh.a=1&fresh.b=&timeout=9223372036854775807',
    ];
    for (const params of asked) {
      const r = await h.raw('GET', `${ROWS}?eid=[7]&${params}`);
      t.equal(r.status, 200, `${params}: ${r.body}`);
      t.equal(r.body, (await h.raw('GET', `${ROWS}?eid=[7]`)).body, `${params}: the stored row`);
      t.ok(r.headers[HEADER], `${params}: asks for freshening, told none ran`);
    }
    const notAsked = await h.raw('GET', `${ROWS}?eid=[7]&freshen=false&fresh.power=2&timeout=5`);
    t.equal(notAsked.status, 200);
    t.equal(notAsked.headers[HEADER], undefined, 'freshen=false with other freshening parameters asks for nothing');

    // Every form of GET rows takes them (KijiREST declared them on the resource), HEAD too.
    const scan = await h.raw('GET', `${ROWS}?limit=5&freshen=true`);
    t.equal(scan.status, 200);
    t.equal(scan.body, (await h.raw('GET', `${ROWS}?limit=5`)).body, 'a scan');
    const bulk = await h.raw('GET', `${ROWS}?eids=${encodeURIComponent(revision === 3 ? '[[7],[8]]' : '["[7]","[8]"]')}&timeout=10`);
    t.equal(bulk.status, 200, bulk.body);
    const head = await h.raw('HEAD', `${ROWS}?eid=[7]&freshen=true`);
    t.equal(head.status, 200);
    t.ok(head.headers[HEADER], 'HEAD carries the header too');
  });

  t.test(`revision ${revision}: bad freshening values and other unknown parameters are 400s`, async (t) => {
    const h = await startInProcess({ revision });
    t.teardown(() => h.close());
    const bad: [string, RegExp][] = [
      ['freshen=yes', /freshen must be true or false, got "yes"/],
      ['freshen=', /freshen must be true or false/],
      ['timeout=-1', /timeout must be a non-negative integer of milliseconds, got "-1"/],
      ['timeout=1.5', /timeout must be a non-negative integer/],
      ['timeout=9223372036854775808', /timeout must be a non-negative integer/],
      ['fresh.=1', /unknown parameter fresh\. for this route/],
      ['freshness=true', /unknown parameter freshness for this route.*fresh\.<key>/],
      ['timout=5', /unknown parameter timout/],
    ];
    for (const [params, message] of bad) {
      const r = await h.raw('GET', `${ROWS}?eid=[7]&${params}`);
      t.equal(r.status, 400, params);
      t.equal(codeOf(r.body), 'RG_ERR_BAD_PARAMETER', params);
      t.match(JSON.parse(r.body).exception, message, params);
      t.equal(r.headers[HEADER], undefined, `${params}: an error says nothing of freshening`);
    }
    t.equal((await h.raw('GET', `${ROWS}?eid=[7]&freshen=true&freshen=false`)).status, 400, 'given twice');
    // Only GET rows declared them.
    const post = await h.raw('POST', `${ROWS}?freshen=false`, JSON.stringify({ entityId: revision === 3 ? [1] : '[1]', cells: {} }), json);
    t.equal(post.status, 400, 'POST rows takes no freshen');
    t.equal((await h.raw('DELETE', `${ROWS}?eid=[1]&timeout=5`)).status, 400, 'DELETE rows takes no timeout');
    t.equal((await h.raw('GET', '/v1/instances/default/tables/sample_table?freshen=true')).status, 400, 'the layout takes no freshen');
  });
}

t.test('revision 1 had no freshening: the parameters are unknown there', async (t) => {
  const h = await startInProcess({ revision: 1 });
  t.teardown(() => h.close());
  for (const params of ['freshen=false', 'timeout=100', 'fresh.power=2']) {
    const r = await h.raw('GET', `${ROWS}?eid=[7]&${params}`);
    t.equal(r.status, 400, params);
    t.match(JSON.parse(r.body).exception, /unknown parameter .* \(the server speaks revision 1;/, params);
  }
  // The GetRequestSampler of the revision 1 era sent no freshen.
  t.equal((await h.raw('GET', `${ROWS}?eid=7&timerange=0..&versions=10`)).status, 200);
});
