/**
 * Cell timestamps are Java longs 0..2^63-1, exact end to end on the embedded store: POST (one
 * body's cells at 2^53-1, 2^53, 2^53+1, a JMeter sampler's random long and 2^63-1), point gets,
 * scans, every revision's row form, timerange bounds, DELETE `timestamp=`, revision 1's PUT,
 * counters, and spilled rows (cell entries). On Bigtable, which keeps microseconds in 64 bits,
 * timestamps up to (2^63-1)/1000 are exact and a later one is a 400 naming that largest value.
 * Bodies are compared as text: JSON.parse would round the very numbers under test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import { EMULATOR_MISSING, startEmulator } from '../store/bigtable-emulator.js';
import { json, raw, startGateway, startGatewayOver, type Harness } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const SAFE_MAX = '9007199254740991'; // 2^53-1
const TWO_53 = '9007199254740992';
const TWO_53_1 = '9007199254740993';
const SAMPLER = '8646911284551352319'; // a PostRequestSampler timestamp (docs/interface.md, "Compatibility with KijiREST's clients")
const LONG_MAX = '9223372036854775807';
/** Oldest first, with the value each is written with. */
const STAMPS: [string, string][] = [
  ['1000', 'a'],
  [SAFE_MAX, 'b'],
  [TWO_53, 'c'],
  [TWO_53_1, 'd'],
  [SAMPLER, 'e'],
  [LONG_MAX, 'f'],
];

/** A row of cells of strings:q at the given timestamps, written as JSON text (raw longs). */
function body(eid: string, stamps: readonly [string, string][], column = 'strings":{"q'): string {
  return `{"entityId":${eid},"cells":{"${column}":[${stamps.map(([ts, v]) => `{"value":"${v}","timestamp":${ts}}`).join(',')}]}}}`;
}

/** The cells text a read returns for the stamps, newest first. */
function cellsText(stamps: readonly [string, string][], withSchema = true): string {
  return [...stamps]
    .reverse()
    .map(([ts, v]) => `{"timestamp":${ts},"value":"${v}"${withSchema ? ',"writer_schema":0' : ''}}`)
    .join(',');
}

const row = (stamps: readonly [string, string][], eid = '[1]') => `{"entityId":${eid},"cells":{"strings":{"q":[${cellsText(stamps)}]}}}\r\n`;

async function post(t: Test, h: Harness, text: string): Promise<void> {
  const r = await raw(h.base, 'POST', ROWS, text, json);
  t.equal(r.status, 200, r.body);
}

t.test("LMDB: POST, point get, scan and every revision's rows keep each long exactly", async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await post(t, h, body('[1]', STAMPS));
  const all = await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all`);
  t.equal(all.body, row(STAMPS), 'point get, every version newest first');
  t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]`)).body, row(STAMPS.slice(-1)), 'versions=1: the newest, 2^63-1');
  t.equal((await raw(h.base, 'GET', `${ROWS}?limit=-1&versions=all`)).body, all.body, 'a scan');
  t.equal((await raw(h.base, 'GET', `${ROWS}?eids=[[1]]&versions=all&cols=strings:q`)).body, all.body, 'a bulk get with cols');

  // The same rows through revisions 1 and 2 (shell entity ids; no writer_schema in revision 1).
  for (const revision of [1, 2] as const) {
    const g = await startGatewayOver(h.store, { revision });
    t.teardown(() => g.close());
    const got = await raw(g.base, 'GET', `${ROWS}?eid=[1]&versions=all`);
    t.equal(got.body, `{"entityId":"[1]","cells":{"strings":{"q":[${cellsText(STAMPS, revision === 2)}]}}}\r\n`, `revision ${revision}`);
  }

  // Versions across the 2^53 boundary are ordered exactly and each replaces only its own timestamp.
  await post(t, h, body('[1]', [[TWO_53_1, 'D']]));
  const replaced = STAMPS.map(([ts, v]): [string, string] => [ts, ts === TWO_53_1 ? 'D' : v]);
  t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all`)).body, row(replaced), '2^53+1 replaced, 2^53 and the sampler long untouched');
});

t.test('LMDB: timerange bounds are exact longs', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await post(t, h, body('[1]', STAMPS));
  const ranges: [string, [string, string][]][] = [
    [`${TWO_53}..${TWO_53_1}`, [[TWO_53, 'c']]],
    [`${SAFE_MAX}..${TWO_53}`, [[SAFE_MAX, 'b']]],
    [
      `${TWO_53_1}..`,
      [
        [TWO_53_1, 'd'],
        [SAMPLER, 'e'],
        [LONG_MAX, 'f'],
      ],
    ],
    [
      `..${TWO_53}`,
      [
        ['1000', 'a'],
        [SAFE_MAX, 'b'],
      ],
    ],
    [`${SAMPLER}..${LONG_MAX}`, [[SAMPLER, 'e']]], // a max of Long.MAX_VALUE is exclusive like any other
    [
      `${TWO_53_1}..9223372036854775806`,
      [
        [TWO_53_1, 'd'],
        [SAMPLER, 'e'],
      ],
    ],
    ['9223372036854775806..', [[LONG_MAX, 'f']]],
  ];
  for (const [range, stamps] of ranges) {
    const r = await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all&timerange=${range}`);
    t.equal(r.body, row(stamps), `timerange=${range}`);
    t.equal((await raw(h.base, 'GET', `${ROWS}?limit=-1&versions=all&timerange=${range}`)).body, r.body, `timerange=${range}, scanned`);
  }
  // versions counts within the range: the newest cell in it.
  t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&timerange=..${TWO_53_1}`)).body, row([[TWO_53, 'c']]));
  // A bound beyond a Java long is a 400 naming it, as every other timestamp beyond 2^63-1 is.
  for (const range of ['0..99999999999999999999', '9223372036854775808..9223372036854775809', `5..9223372036854775808`]) {
    for (const query of ['eid=[1]&', 'limit=-1&']) {
      const r = await raw(h.base, 'GET', `${ROWS}?${query}timerange=${range}`);
      t.equal(r.status, 400, `timerange=${range}`);
      t.match(JSON.parse(r.body), { code: 'RG_ERR_BAD_TIMERANGE', exception: /^timerange bounds must be from 0 to 9223372036854775807, got [0-9]+ in / });
    }
  }
});

t.test('LMDB: DELETE timestamp= and revision 1 PUT take exact longs; counters keep theirs', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await post(t, h, body('[1]', STAMPS));
  const del = await raw(h.base, 'DELETE', `${ROWS}?eid=[1]&cols=strings&timestamp=${TWO_53}`);
  t.equal(del.status, 200, del.body);
  t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all`)).body, row(STAMPS.slice(3)), 'versions at or before 2^53 deleted, 2^53+1 kept');
  t.equal((await raw(h.base, 'DELETE', `${ROWS}?eid=[1]&timestamp=${LONG_MAX}`)).status, 200);
  t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all`)).body, '{"entityId":[1],"cells":{}}\r\n', 'up to 2^63-1: every version');
  for (const bad of ['9223372036854775808', '-1', '1.5']) {
    const r = await raw(h.base, 'DELETE', `${ROWS}?eid=[1]&timestamp=${bad}`);
    t.equal(r.status, 400, bad);
    t.match(JSON.parse(r.body), { code: 'RG_ERR_BAD_TIMESTAMP', exception: new RegExp(`from 0 to ${LONG_MAX}, got "${bad.replace('.', '\\.')}"`) });
  }
  // A POST beyond 2^63-1 is refused naming the range.
  const over = await raw(h.base, 'POST', ROWS, body('[2]', [['9223372036854775808', 'x']]), json);
  t.equal(over.status, 400);
  t.match(JSON.parse(over.body).exception, /must be an integer of milliseconds from 0 to 9223372036854775807, got 9223372036854775808/);

  // A counter set at 2^63-1 keeps that timestamp when incremented (a counter in the future is updated in place).
  await post(t, h, `{"entityId":[3],"cells":{"group_family":{"counter":[{"value":5,"timestamp":${LONG_MAX}}]}}}`);
  await post(t, h, '{"entityId":[3],"cells":{"group_family":{"counter":[{"value":{"incr":1}}]}}}');
  t.equal(
    (await raw(h.base, 'GET', `${ROWS}?eid=[3]`)).body,
    `{"entityId":[3],"cells":{"group_family":{"counter":[{"timestamp":${LONG_MAX},"value":6,"writer_schema":3}]}}}\r\n`,
  );

  // Revision 1's PUT: timestamp and timestamp.<column> beyond 2^53.
  const one = await startGatewayOver(h.store, { revision: 1 });
  t.teardown(() => one.close());
  const key = JSON.parse((await raw(one.base, 'GET', '/v1/instances/default/tables/sample_table/entityId?eid=[4]')).body).rowKey as string;
  const put = await raw(one.base, 'PUT', `${ROWS}/${key}?timestamp=${TWO_53_1}&strings:a=%22x%22&strings:b=%22y%22&timestamp.strings:b=${LONG_MAX}`);
  t.equal(put.status, 200, put.body);
  t.equal(put.body, `{"entityId":"[4]","cells":{"strings":{"a":[{"timestamp":${TWO_53_1},"value":"x"}],"b":[{"timestamp":${LONG_MAX},"value":"y"}]}}}`);
});

t.test('LMDB: a spilled row (cell entries) keeps each long exactly', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  // Over 16 KiB of qualifiers: the row is spilled to one entry per cell.
  const filler = Array.from({ length: 300 }, (_, i) => `"f${i}":[{"value":"${'v'.repeat(60)}","timestamp":1}]`).join(',');
  await post(t, h, `{"entityId":[1],"cells":{"strings":{${filler}}}}`);
  await post(t, h, body('[1]', STAMPS));
  t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all&cols=strings:q`)).body, row(STAMPS), 'point get');
  t.equal((await raw(h.base, 'GET', `${ROWS}?limit=-1&versions=all&cols=strings:q`)).body, row(STAMPS), 'scan');
  t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all&cols=strings:q&timerange=${TWO_53}..${TWO_53_1}`)).body, row([[TWO_53, 'c']]), 'timerange');
  t.equal((await raw(h.base, 'DELETE', `${ROWS}?eid=[1]&cols=strings:q&timestamp=${TWO_53}`)).status, 200);
  t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all&cols=strings:q`)).body, row(STAMPS.slice(3)), 'DELETE up to 2^53');
});

t.test('LMDB: a parallel export (scan threads) reads bigint bounds and cells exactly', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-ts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // Tiny thresholds: any whole-table scan is split into parts rendered by the threads.
  const store = new LmdbStore({ path: dir, scanThreads: 2, parallelScan: { minBytes: 1, partBytes: 512 } });
  const h = await startGateway({}, { store });
  t.teardown(() => h.close());
  await post(t, h, `[${Array.from({ length: 40 }, (_, i) => body(`[${i}]`, STAMPS)).join(',')}]`);
  for (const query of ['versions=all', `versions=all&timerange=${TWO_53}..${LONG_MAX}`, `versions=2&timerange=${TWO_53_1}..9223372036854775806`]) {
    const parallel = await raw(h.base, 'GET', `${ROWS}?limit=-1&${query}`);
    const single = await raw(h.base, 'GET', `${ROWS}?limit=1000&${query}`);
    t.equal(parallel.status, 200);
    t.equal(parallel.body, single.body, `${query}: the threads render what the request's thread does`);
  }
  t.match(
    (await raw(h.base, 'GET', `${ROWS}?limit=-1&versions=all&timerange=${TWO_53}..${TWO_53_1}`)).body,
    new RegExp(`^(\\{"entityId":\\[\\d+\\],"cells":\\{"strings":\\{"q":\\[\\{"timestamp":${TWO_53},"value":"c","writer_schema":0\\}\\]\\}\\}\\}\\r\\n){40}$`),
  );
});

const emulator = await startEmulator();
if (emulator) t.teardown(() => emulator.stop());
t.test(
  'Bigtable: exact up to (2^63-1)/1000 ms, a later timestamp a 400 naming that largest value',
  { skip: emulator ? false : EMULATOR_MISSING },
  async (t) => {
    const store = await BigtableStore.open({ projectId: 'test', instanceId: 'ts', tablePrefix: 'ts' });
    const h = await startGateway({}, { store });
    t.teardown(() => h.close());
    const BT_MAX = '9223372036854775';
    const stamps: [string, string][] = [
      ['1000', 'a'],
      [SAFE_MAX, 'b'],
      [TWO_53, 'c'],
      [TWO_53_1, 'd'],
      [BT_MAX, 'e'],
    ];
    await post(t, h, body('[1]', stamps));
    t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all`)).body, row(stamps), 'point get');
    t.equal((await raw(h.base, 'GET', `${ROWS}?limit=-1&versions=all`)).body, row(stamps), 'scan');
    t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all&timerange=${TWO_53}..${TWO_53_1}`)).body, row([[TWO_53, 'c']]), 'timerange');
    t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all&timerange=${TWO_53_1}..`)).body, row(stamps.slice(3)), 'timerange to Long.MAX_VALUE');
    t.equal(
      (await raw(h.base, 'GET', `${ROWS}?eid=[1]&timerange=${SAMPLER}..`)).body,
      '{"entityId":[1],"cells":{}}\r\n',
      'a range after every cell Bigtable can hold',
    );
    for (const ts of ['9223372036854776', SAMPLER, LONG_MAX]) {
      const r = await raw(h.base, 'POST', ROWS, body('[2]', [[ts, 'x']]), json);
      t.equal(r.status, 400, ts);
      t.match(
        JSON.parse(r.body),
        {
          code: 'RG_ERR_BAD_TIMESTAMP',
          exception: new RegExp(`timestamp ${ts} of column strings:q is too large for Bigtable.*the largest timestamp it accepts is ${BT_MAX} ms`),
        },
        ts,
      );
    }
    t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[2]`)).body, '{"entityId":[2],"cells":{}}\r\n', 'nothing of a refused body written');
    t.equal((await raw(h.base, 'DELETE', `${ROWS}?eid=[1]&cols=strings:q&timestamp=${TWO_53}`)).status, 200);
    t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all`)).body, row(stamps.slice(3)), 'DELETE up to 2^53');
    t.equal((await raw(h.base, 'DELETE', `${ROWS}?eid=[1]&cols=strings:q&timestamp=${LONG_MAX}`)).status, 200);
    t.equal((await raw(h.base, 'GET', `${ROWS}?eid=[1]&versions=all`)).body, '{"entityId":[1],"cells":{}}\r\n', 'DELETE up to 2^63-1: every version');
  },
);
