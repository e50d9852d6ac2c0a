/**
 * Content negotiation on GET rows: application/json, anything matching it or no Accept keep
 * today's bytes exactly; application/x-ndjson is the same rows LF framed; application/avro an Avro
 * container file that Apache Avro's reader (python3-avro) reads back to the same cells; anything
 * else is a 406 with the JSON error body. Scans (with trailers) and point/bulk gets alike.
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { AVRO_READER_MISSING, hasPythonAvro, readWithPythonAvro } from '../support/python-avro.js';
import { getBytes, raw, SAMPLE_LAYOUT, startGateway } from './harness.js';
import { expectedAvroRecords } from './suites/avro-expected.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';

export function sampleRows(n: number): RowWrite[] {
  const format = parseLayout(SAMPLE_LAYOUT).keyFormat;
  const rows: RowWrite[] = [];
  for (let i = 0; i < n; i++) {
    rows.push({
      rowKey: encodeRowKey(format, [BigInt(i) * 7n + 9007199254740993n]),
      cells: [
        { kind: 'value', family: 'group_family', qualifier: 'string_qualifier', timestamp: 10 + i, schemaId: 0, json: JSON.stringify(`s ${i}\r\n`) },
        { kind: 'value', family: 'group_family', qualifier: 'string_qualifier', timestamp: 5, schemaId: 0, json: '"older"' },
        { kind: 'value', family: 'group_family', qualifier: 'long_qualifier', timestamp: 3, schemaId: 3, json: String(9007199254740993n + BigInt(i)) },
        { kind: 'value', family: 'strings', qualifier: `q ${i % 4}`, timestamp: 1, schemaId: 0, json: '"m"' },
        { kind: 'value', family: 'longs', qualifier: 'n', timestamp: 2, schemaId: 3, json: String(-i) },
      ],
    });
  }
  return rows;
}

t.test('Accept picks the format; json clients keep their bytes; others are a 406', async (t) => {
  const h = await startGateway({ compression: true });
  t.teardown(() => h.close());
  await h.store.write('default', 'sample_table', sampleRows(300));
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-formats-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const eids = encodeURIComponent(JSON.stringify([[9007199254740993], [9007199254741000], [1]]));
  for (const path of [`${ROWS}?limit=-1&versions=all`, `${ROWS}?limit=120`, `${ROWS}?eids=${eids}&versions=all`, `${ROWS}?eid=[9007199254740993]`]) {
    const plain = await getBytes(h.base, path, {});
    t.equal(plain.type, 'application/json');
    for (const accept of [
      'application/json',
      '*/*',
      'application/*',
      'text/html, application/xhtml+xml, */*;q=0.8',
      'application/json; charset=utf-8',
      'application/avro;q=0.5, application/json',
    ]) {
      const same = await getBytes(h.base, path, { accept });
      t.ok(same.body.equals(plain.body) && same.type === 'application/json', `${path.slice(40, 70)} Accept: ${accept}: today's bytes`);
    }
    const nd = await getBytes(h.base, path, { accept: 'application/x-ndjson' });
    t.equal(nd.type, 'application/x-ndjson');
    t.equal(nd.body.toString('utf8'), plain.body.toString('utf8').replaceAll('\r\n', '\n'), `${path.slice(40, 70)}: ndjson is the rows LF framed`);
    if (path.includes('limit=120'))
      t.same(
        [nd.trailers['x-rowgate-rows'], nd.trailers['x-rowgate-next-start']],
        [plain.trailers['x-rowgate-rows'], plain.trailers['x-rowgate-next-start']],
        'ndjson: the same trailers',
      );

    const av = await getBytes(h.base, path, { accept: 'application/avro' });
    t.equal(av.type, 'application/avro');
    t.equal(av.body.subarray(0, 4).toString('latin1'), 'Obj\x01', 'an Avro object container file');
    if (hasPythonAvro()) {
      const file = join(dir, 'rows.avro');
      writeFileSync(file, av.body);
      const read = readWithPythonAvro(file);
      t.same(read.records, expectedAvroRecords(plain.body.toString('utf8')), `${path.slice(40, 70)}: python3-avro reads the same cells back`);
    }
  }
  t.comment(hasPythonAvro() ? 'Avro files checked with python3-avro' : `Avro files not read back: ${AVRO_READER_MISSING}`);

  const gz = await getBytes(h.base, `${ROWS}?limit=-1`, { accept: 'application/x-ndjson', 'accept-encoding': 'gzip' });
  t.equal(gz.status, 200);
  for (const accept of ['text/plain', 'application/xml', 'application/json;q=0', 'image/*']) {
    const res = await raw(h.base, 'GET', `${ROWS}?limit=5`, undefined, { accept });
    t.equal(res.status, 406, `Accept: ${accept}`);
    t.equal(res.headers['content-type'], 'application/json');
    t.equal(JSON.parse(res.body).code, 'RG_ERR_NOT_ACCEPTABLE');
  }
});

t.test(
  'regression: an Accept of constructor or __proto__ is no media range: json, never a 500 (media types were looked up in an object literal)',
  async (t) => {
    const h = await startGateway();
    t.teardown(() => h.close());
    for (const accept of ['constructor', '__proto__', 'toString', 'hasOwnProperty, constructor']) {
      for (const path of [`${ROWS}?limit=5`, `${ROWS}?eid=${encodeURIComponent('[1]')}`]) {
        const res = await raw(h.base, 'GET', path, undefined, { accept });
        t.equal(res.status, 200, `Accept: ${accept} on ${path.slice(-20)}`);
        t.equal(res.headers['content-type'], 'application/json');
      }
    }
    for (const accept of ['constructor/x', '__proto__/json']) {
      const res = await raw(h.base, 'GET', `${ROWS}?limit=5`, undefined, { accept });
      t.equal(res.status, 406, `Accept: ${accept}: a media range naming no served format`);
      t.equal(JSON.parse(res.body).code, 'RG_ERR_NOT_ACCEPTABLE');
    }
  },
);

t.test('an Accept that cannot be parsed is treated as absent (json), as most servers do; a parsed one naming no served format stays a 406', async (t) => {
  const h = await startGateway();
  t.teardown(() => h.close());
  await h.store.write('default', 'sample_table', sampleRows(3));
  const plain = await getBytes(h.base, `${ROWS}?limit=-1`, {});
  const asks: [string, string][] = [
    [',,,', 'application/json'],
    [' , ; ,', 'application/json'],
    ['application/json;q=abc', 'application/json'],
    ['application/avro;q=abc', 'application/json'],
    ['application/json;q=', 'application/json'],
    ['application/json;q=1.5', 'application/json'],
    ['json', 'application/json'],
    // Only the range that cannot be parsed is dropped: the rest still chooses.
    ['application/avro;q=abc, application/x-ndjson', 'application/x-ndjson'],
    [',,application/x-ndjson,,', 'application/x-ndjson'],
  ];
  for (const [accept, type] of asks) {
    const res = await getBytes(h.base, `${ROWS}?limit=-1`, { accept });
    t.equal(res.status, 200, `Accept: ${JSON.stringify(accept)}`);
    t.equal(res.type, type, `Accept: ${JSON.stringify(accept)}`);
    if (type === 'application/json') t.ok(res.body.equals(plain.body), `Accept: ${JSON.stringify(accept)}: the bytes of no Accept`);
  }
  for (const accept of ['text/plain', 'application/json;q=0', 'text/plain;q=abc, image/png']) {
    const res = await raw(h.base, 'GET', `${ROWS}?limit=5`, undefined, { accept });
    t.equal(res.status, 406, `Accept: ${accept}`);
    t.equal(JSON.parse(res.body).code, 'RG_ERR_NOT_ACCEPTABLE');
  }
});
