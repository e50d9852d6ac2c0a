/**
 * Revision 3 entity id forms, checked in process (docs/interface.md, "Entity ids"): a POSTed row's
 * `entityId` as a JSON array, `rowkey=<escaped>`, `rowkey_hex=`, `hbase=` and `hbase_hex=`, on a
 * FORMATTED table and a RAW table. Each POST target is exact and leads back to the row, and every
 * row reads back through each URL `eid=` form (and `eids`). Row keys contain bytes that must be
 * escaped as \xHH in the rowkey=/hbase= forms.
 *
 * Expected row keys are computed here independently of lib/ (KijiSchema's FORMATTED encoding:
 * 2 bytes of MD5 salt, then the LONG big-endian with the sign bit flipped).
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { json, RAW_TABLE_LAYOUT, rowsOf } from '../support/fixture-tables.js';
import { startInProcess, type InProcessGateway } from '../support/in-process.js';

const SAMPLE = '/v1/instances/default/tables/sample_table/rows';
const RAW_TABLE = '/v1/instances/default/tables/raw_table/rows';
const FORMS = ['json', 'rowkey=', 'rowkey_hex=', 'hbase=', 'hbase_hex='] as const;
type Form = (typeof FORMS)[number];

type Cell = { timestamp: number; value: unknown };
type Row = { entityId: unknown; cells: Record<string, Record<string, Cell[]>> };

/** HBase Bytes.toStringBinary: printable ASCII except backslash as is, every other byte \xHH. */
function escaped(key: Buffer): string {
  let out = '';
  for (const b of key) out += b >= 0x20 && b <= 0x7e && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** The row key of [n] in sample_table (FORMATTED, one LONG component, hash_size 2). */
function longKey(n: bigint): Buffer {
  const value = Buffer.alloc(8);
  value.writeBigUInt64BE(BigInt.asUintN(64, n) ^ (1n << 63n));
  return Buffer.concat([createHash('md5').update(value).digest().subarray(0, 2), value]);
}

/** An entity id in one of the forms: `json` is the JSON array of components (a value), the rest are strings. */
function entityId(form: Form, components: unknown[], key: Buffer): unknown {
  switch (form) {
    case 'json':
      return components;
    case 'rowkey=':
    case 'hbase=':
      return `${form}${escaped(key)}`;
    case 'rowkey_hex=':
    case 'hbase_hex=':
      return `${form}${key.toString('hex')}`;
  }
}

/** The URL `eid` text of an entity id form. */
const eidText = (form: Form, components: unknown[], key: Buffer): string => {
  const id = entityId(form, components, key);
  return typeof id === 'string' ? id : JSON.stringify(id);
};

let h: InProcessGateway;
t.before(async () => {
  h = await startInProcess();
  await h.store.createTable('default', parseLayout(RAW_TABLE_LAYOUT));
});
t.teardown(() => h.close());

const get = async (path: string): Promise<Row[]> => {
  const res = await h.raw('GET', path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.body}`);
  return rowsOf(res.body) as Row[];
};

t.test('the escaping helper is HBase toStringBinary', async (t) => {
  t.equal(escaped(Buffer.from([0x61, 0x00, 0x5c, 0x7f, 0x20, 0xff])), 'a\\x00\\x5C\\x7F \\xFF');
  t.equal(longKey(12345n).toString('hex'), '44018000000000003039', 'the key of [12345] the other tests pin');
});

t.test('FORMATTED table: POST in every entityId form, exact targets, each target and each eid form reads the row', async (t) => {
  const ids = new Map<Form, bigint>([
    ['json', 101n],
    ['rowkey=', 0n],
    ['rowkey_hex=', -1n],
    ['hbase=', 4242n],
    ['hbase_hex=', 9007199254740993n],
  ]);
  const rows = FORMS.map((form) => {
    const n = ids.get(form)!;
    const components = [n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n];
    return { form, n, key: longKey(n), components };
  });
  for (const r of rows) t.match(escaped(r.key), /\\x[0-9A-F]{2}/, `the key of [${r.n}] has bytes that rowkey= escapes: ${escaped(r.key)}`);
  // 9007199254740993 is beyond double precision: the body is written by hand so it stays exact.
  const body = `[${rows
    .map(
      (r) =>
        `{"entityId": ${r.form === 'json' ? `[${r.n}]` : JSON.stringify(entityId(r.form, r.components, r.key))}, "cells": {"strings": {"form": [{"value": ${JSON.stringify(`via ${r.form}`)}, "timestamp": 1}]}}}`,
    )
    .join(', ')}]`;
  const res = await h.raw('POST', SAMPLE, body, json);
  t.equal(res.status, 200, res.body);
  const { targets } = JSON.parse(res.body) as { targets: string[] };
  t.same(
    targets,
    rows.map((r) => `${SAMPLE}?eid=${encodeURIComponent(r.form === 'json' ? `[${r.n}]` : (entityId(r.form, r.components, r.key) as string))}`),
    'one exact target per row, the entity id as given, URL-encoded',
  );
  t.equal(targets[0], `${SAMPLE}?eid=%5B101%5D`, 'a JSON array target');
  // The key of [0] is 54 40 80 00 ... 00: "T@" then eight escaped bytes.
  t.equal(targets[1], `${SAMPLE}?eid=rowkey%3DT%40%5Cx80${'%5Cx00'.repeat(7)}`, 'a rowkey= target: =, @ and each backslash percent-encoded');
  t.equal(targets[2], `${SAMPLE}?eid=rowkey_hex%3D${longKey(-1n).toString('hex')}`, 'a rowkey_hex= target');

  for (const [i, r] of rows.entries()) {
    const check = async (path: string, how: string) => {
      const res = await h.raw('GET', path);
      t.equal(res.status, 200, `${r.form} row via ${how}: ${res.body.slice(0, 200)}`);
      const got = rowsOf(res.body) as Row[];
      t.equal(got.length, 1, `${r.form} row via ${how}: one row`);
      // Checked on the text: 9007199254740993 does not survive JSON.parse as a number.
      t.ok(res.body.startsWith(`{"entityId":[${r.n}],`), `${r.form} row via ${how}: entityId [${r.n}]`);
      t.equal(got[0]?.cells.strings?.form?.[0]?.value, `via ${r.form}`, `${r.form} row via ${how}: its cell`);
    };
    await check(targets[i]!, 'its POST target');
    for (const form of FORMS)
      await check(`${SAMPLE}?eid=${encodeURIComponent(form === 'json' ? `[${r.n}]` : eidText(form, r.components, r.key))}`, `eid in the ${form} form`);
  }
  const bulk = await get(
    `${SAMPLE}?eids=${encodeURIComponent(`[${rows.map((r, i) => (FORMS[i] === 'json' ? `[${r.n}]` : JSON.stringify(eidText(FORMS[i]!, r.components, r.key)))).join(',')}]`)}`,
  );
  t.same(
    bulk.map((row) => row.cells.strings?.form?.[0]?.value),
    rows.map((r) => `via ${r.form}`),
    'eids takes every form, one row each in request order',
  );
  const row0 = (
    await get(
      `${SAMPLE}?eid=${encodeURIComponent(`rowkey=${escaped(longKey(0n)).replace(/\\x([0-9A-F]{2})/g, (_, hex: string) => `\\x${hex.toLowerCase()}`)}`)}`,
    )
  )[0];
  t.equal(row0?.cells.strings?.form?.[0]?.value, 'via rowkey=', 'lowercase hex digits in \\xHH address the same row');
});

t.test('RAW table: POST in every entityId form, exact targets, each target and each eid form reads the row', async (t) => {
  const keys = new Map<Form, string>([
    ['json', 'a\u0000b'],
    ['rowkey=', 'k\\ey'],
    ['rowkey_hex=', 'tab\tx'],
    ['hbase=', 'caf\u00e9'],
    ['hbase_hex=', 'sp ace\r\n'],
  ]);
  const rows = FORMS.map((form) => {
    const text = keys.get(form)!;
    return { form, text, key: Buffer.from(text, 'utf8'), components: [text] };
  });
  for (const r of rows) t.match(escaped(r.key), /\\x[0-9A-F]{2}/, `the key ${JSON.stringify(r.text)} has bytes that rowkey= escapes: ${escaped(r.key)}`);
  const res = await h.raw(
    'POST',
    RAW_TABLE,
    JSON.stringify(
      rows.map((r) => ({ entityId: entityId(r.form, r.components, r.key), cells: { info: { form: [{ value: `via ${r.form}`, timestamp: 1 }] } } })),
    ),
    json,
  );
  t.equal(res.status, 200, res.body);
  const { targets } = JSON.parse(res.body) as { targets: string[] };
  t.same(
    targets,
    rows.map((r) => `${RAW_TABLE}?eid=${encodeURIComponent(eidText(r.form, r.components, r.key))}`),
    'one exact target per row',
  );
  t.equal(targets[0], `${RAW_TABLE}?eid=%5B%22a%5Cu0000b%22%5D`, 'a JSON array target');
  t.equal(targets[1], `${RAW_TABLE}?eid=rowkey%3Dk%5Cx5Cey`, 'a rowkey= target with an escaped backslash');

  for (const [i, r] of rows.entries()) {
    const check = (got: Row[], how: string) => {
      t.same(
        got.map((row) => ({ entityId: row.entityId, value: row.cells.info?.form?.[0]?.value })),
        [{ entityId: `rowkey=${escaped(r.key)}`, value: `via ${r.form}` }],
        `${JSON.stringify(r.text)} via ${how}: a RAW row's entityId is its rowkey= form`,
      );
    };
    check(await get(targets[i]!), 'its POST target');
    for (const form of FORMS) check(await get(`${RAW_TABLE}?eid=${encodeURIComponent(eidText(form, r.components, r.key))}`), `eid in the ${form} form`);
  }
});

t.test('RAW table: a key that is not UTF-8 round-trips through the four row key forms', async (t) => {
  const key = Buffer.from([0xff, 0x00, 0x80, 0x5c, 0x41]);
  const res = await h.raw(
    'POST',
    RAW_TABLE,
    JSON.stringify({ entityId: `rowkey=${escaped(key)}`, cells: { info: { form: [{ value: 'binary', timestamp: 1 }] } } }),
    json,
  );
  t.equal(res.status, 200, res.body);
  t.same(JSON.parse(res.body), { targets: [`${RAW_TABLE}?eid=rowkey%3D%5CxFF%5Cx00%5Cx80%5Cx5CA`] });
  for (const form of FORMS.filter((f) => f !== 'json')) {
    const got = await get(`${RAW_TABLE}?eid=${encodeURIComponent(eidText(form, [], key))}`);
    t.same(
      got.map((row) => ({ entityId: row.entityId, value: row.cells.info?.form?.[0]?.value })),
      [{ entityId: 'rowkey=\\xFF\\x00\\x80\\x5CA', value: 'binary' }],
      `via eid in the ${form} form`,
    );
  }
});
