/**
 * One definition of a valid body: one corpus of good and bad rows, posted with a Content-Length
 * (the body in one piece), posted chunked in pieces of 1, 7 and 4096 bytes, and imported with
 * `rowgate import` (one row a line). Every path must give the same verdict (the same status and
 * error body over HTTP; the same message from the import) and store the same cells, read back from
 * the store: the streamed path once accepted what the whole-body path refused (bytes that are not
 * UTF-8 stored as U+FFFD, a "__proto__" family dropped, a "__proto__" row field ignored), and
 * import decoded lines as the streamed path did.
 *
 * Not in the corpus, being different on purpose: an import skips blank lines and a byte order mark
 * on its first line (an empty body or one starting with a byte order mark is a 400).
 */
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { END_OF_TIME } from '../../lib/model/read/read-request.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import { LmdbStore } from '../../lib/store/lmdb/lmdb-store.js';
import type { Store } from '../../lib/store/store.js';
import { ensureBuilt, runCli, tempDir, writeFile, type CliResult } from '../cli/helpers.js';
import { raw, SAMPLE_LAYOUT, startGateway, type RawResponse } from './harness.js';

t.before(ensureBuilt);

interface Case {
  readonly name: string;
  /** The rows: one body of one row (the row itself) or of several (a JSON array); one line each for import. */
  readonly rows: readonly (string | Buffer)[];
  /** What every path must answer: 'ok', or the error code. */
  readonly expect: 'ok' | string;
}

const SAMPLE = parseLayout(SAMPLE_LAYOUT);
const b = (...parts: (string | number[])[]): Buffer => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
const row = (id: number, cells: string): string => `{"entityId":[${id}],"cells":${cells}}`;
const str = (value: string, ts: number | string = 5): string => `{"group_family":{"string_qualifier":[{"value":${value},"timestamp":${ts}}]}}`;

const CORPUS: readonly Case[] = [
  // Good rows.
  { name: 'a string cell', rows: [row(1, str('"a"'))], expect: 'ok' },
  { name: 'escapes and characters beyond the BMP', rows: [row(2, str('"\\u00e9\\ud83d\\ude00 é😀 \\"q\\" \\\\ \\/ \\n\\t\\u0000"'))], expect: 'ok' },
  { name: 'a lone surrogate escape (JSON allows it)', rows: [row(3, str('"\\ud800"'))], expect: 'ok' },
  {
    name: 'longs beyond 2^53',
    rows: [
      row(
        4,
        '{"longs":{"max":[{"value":9223372036854775807,"timestamp":1}],"min":[{"value":-9223372036854775808,"timestamp":2}],"x":[{"value":9007199254740993,"timestamp":3}]}}',
      ),
    ],
    expect: 'ok',
  },
  {
    name: 'several cells, versions and writer_schema forms',
    rows: [
      row(
        5,
        '{"group_family":{"string_qualifier":[{"value":"v1","timestamp":10,"writer_schema":"string"},{"value":"v2","timestamp":11,"writer_schema":0},{"value":"v3","timestamp":12,"writer_schema":{"type":"string"}}],"long_qualifier":[{"value":7,"timestamp":10,"writer_schema":"int"}]},"strings":{"ü k":[{"value":"m","timestamp":4}],"":[{"value":"empty qualifier","timestamp":4}]}}',
      ),
    ],
    expect: 'ok',
  },
  {
    name: 'a union and a record',
    rows: [
      row(
        6,
        '{"group_family":{"union_qualifier":[{"value":{"string":"u"},"timestamp":3},{"value":null,"timestamp":4}],"inline_record":[{"value":{"username":"ada","num_purchases":9007199254740993,"nick":{"string":"a"}},"timestamp":5}]}}',
      ),
    ],
    expect: 'ok',
  },
  {
    name: 'counters set and incremented, writer_schema "long" or 3',
    rows: [
      row(7, '{"group_family":{"counter":[{"value":40,"timestamp":1,"writer_schema":3}]}}'),
      row(7, '{"group_family":{"counter":[{"value":{"incr":2},"writer_schema":"long"}]}}'),
    ],
    expect: 'ok',
  },
  {
    name: 'no cells, an existing family with none, an existing column with none',
    rows: [row(8, '{}'), row(9, '{"strings":{}}'), row(10, '{"group_family":{"string_qualifier":[]},"longs":{"any":[]}}')],
    expect: 'ok',
  },
  { name: 'whitespace everywhere (CR and tab too)', rows: [` \t{ "entityId" :\r[ 11 ] , "cells" : ${str('"ws"')} }\t\r `], expect: 'ok' },
  {
    name: 'a row key given as rowkey_hex',
    rows: [`{"entityId":"rowkey_hex=${encodeRowKey(SAMPLE.keyFormat, [13n]).toString('hex')}","cells":${str('"hex"')}}`],
    expect: 'ok',
  },
  { name: 'an array of rows, one row written twice', rows: [row(14, str('"x"', 1)), row(15, str('"y"', 1)), row(14, str('"z"', 1))], expect: 'ok' },
  { name: 'a long value', rows: [row(16, str(JSON.stringify('long '.repeat(2000))))], expect: 'ok' },
  // Timestamps as KijiREST's Jackson binding into a Long took them.
  {
    name: 'a fractional timestamp truncated, a string of digits read as the number',
    rows: [
      row(
        18,
        '{"group_family":{"string_qualifier":[{"value":"f","timestamp":1234567890123.987},{"value":"s","timestamp":"1000"},{"value":"e","timestamp":1.5e3}]}}',
      ),
    ],
    expect: 'ok',
  },
  { name: 'a negative fractional timestamp', rows: [row(19, str('"a"', -0.5))], expect: 'RG_ERR_BAD_TIMESTAMP' },
  { name: 'a timestamp string that is not digits', rows: [row(78, str('"a"', '"12a"'))], expect: 'RG_ERR_BAD_TIMESTAMP' },
  // Nesting: a cell's writer_schema is inside 5 levels; 512 levels parse (and are no schema), 513 do not.
  {
    name: 'nesting 512 deep parses',
    rows: [row(17, `{"group_family":{"string_qualifier":[{"value":"d","timestamp":1,"writer_schema":${'['.repeat(507)}"string"${']'.repeat(507)}}]}}`)],
    expect: 'RG_ERR_BAD_SCHEMA',
  },

  // Bytes that are not UTF-8, anywhere.
  {
    name: 'an invalid byte in a value',
    rows: [b('{"entityId":[20],"cells":{"group_family":{"string_qualifier":[{"value":"a', [0xff], 'b","timestamp":5}]}}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'an overlong encoding',
    rows: [b('{"entityId":[21],"cells":{"group_family":{"string_qualifier":[{"value":"', [0xc0, 0xaf], '","timestamp":5}]}}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'an encoded surrogate',
    rows: [b('{"entityId":[22],"cells":{"group_family":{"string_qualifier":[{"value":"', [0xed, 0xa0, 0x80], '","timestamp":5}]}}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'a sequence cut short',
    rows: [b('{"entityId":[23],"cells":{"group_family":{"string_qualifier":[{"value":"', [0xe2, 0x82], '","timestamp":5}]}}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'an invalid byte in a key',
    rows: [b('{"entityId":[24],"cells":{"strings":{"k', [0x80], '":[{"value":"v","timestamp":5}]}}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  { name: 'a body ending in a cut sequence', rows: [b(row(25, str('"a"')), [0xf0, 0x9f])], expect: 'RG_ERR_BAD_BODY' },
  {
    name: 'an invalid byte in the second of two rows',
    rows: [row(26, str('"ok"')), b('{"entityId":[27],"cells":{"group_family":{"string_qualifier":[{"value":"', [0xfe], '","timestamp":5}]}}}')],
    expect: 'RG_ERR_BAD_BODY',
  },

  // "__proto__" is a key like any other.
  { name: 'a "__proto__" family with cells', rows: [row(30, '{"__proto__":{"a":[{"value":"x","timestamp":5}]}}')], expect: 'RG_ERR_UNKNOWN_COLUMN' },
  { name: 'a "__proto__" family with none', rows: [row(31, '{"__proto__":{}}')], expect: 'RG_ERR_UNKNOWN_COLUMN' },
  { name: 'a "__proto__" row field', rows: ['{"entityId":[32],"__proto__":{"x":1},"cells":' + str('"p"') + '}'], expect: 'RG_ERR_BAD_BODY' },
  {
    name: 'a "__proto__" cell field',
    rows: [row(33, '{"group_family":{"string_qualifier":[{"value":"p","timestamp":5,"__proto__":{"value":"q"}}]}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'a "__proto__" qualifier of a group family',
    rows: [row(34, '{"group_family":{"__proto__":[{"value":"p","timestamp":5}]}}')],
    expect: 'RG_ERR_UNKNOWN_COLUMN',
  },
  { name: 'a "__proto__" qualifier of a map family is a qualifier', rows: [row(35, '{"strings":{"__proto__":[{"value":"p","timestamp":5}]}}')], expect: 'ok' },
  {
    name: 'a "__proto__" value of a record',
    rows: [row(36, '{"group_family":{"inline_record":[{"value":{"username":"a","num_purchases":1,"__proto__":{"nick":{"string":"n"}}},"timestamp":5}]}}')],
    expect: 'RG_ERR_BAD_VALUE',
  },

  // Names with no cells, writer schemas of counters.
  { name: 'a family that does not exist, with no cells', rows: [row(40, '{"nofam":{}}')], expect: 'RG_ERR_UNKNOWN_COLUMN' },
  {
    name: 'a family that does not exist, among valid rows',
    rows: [row(41, str('"a"')), row(42, '{"nofam":{}}'), row(43, str('"c"'))],
    expect: 'RG_ERR_UNKNOWN_COLUMN',
  },
  { name: 'a column that does not exist, with no cells', rows: [row(44, '{"group_family":{"nope":[]}}')], expect: 'RG_ERR_UNKNOWN_COLUMN' },
  {
    name: 'a counter written as a string',
    rows: [row(45, '{"group_family":{"counter":[{"value":5,"timestamp":1,"writer_schema":"string"}]}}')],
    expect: 'RG_ERR_BAD_SCHEMA',
  },
  {
    name: 'a counter increment with writer_schema 0',
    rows: [row(46, '{"group_family":{"counter":[{"value":{"incr":1},"writer_schema":0}]}}')],
    expect: 'RG_ERR_BAD_SCHEMA',
  },

  // A key repeated in one object: JSON.parse kept the last one silently (a family's cells dropped,
  // the row written under the second entityId); refused wherever it is, naming the key.
  {
    name: 'a repeated value',
    rows: [row(12, '{"group_family":{"string_qualifier":[{"value":"first","value":"second","timestamp":5}]}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'a repeated timestamp',
    rows: [row(68, '{"group_family":{"string_qualifier":[{"value":"v","timestamp":5,"timestamp":6}]}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'a repeated family',
    rows: [row(69, '{"group_family":{"string_qualifier":[{"value":"a","timestamp":5}]},"group_family":{"long_qualifier":[{"value":1,"timestamp":5}]}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'a repeated map qualifier',
    rows: [row(70, '{"strings":{"q":[{"value":"a","timestamp":5}],"q":[{"value":"b","timestamp":6}]}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'a repeated group column',
    rows: [row(71, '{"group_family":{"string_qualifier":[{"value":"a","timestamp":5}],"string_qualifier":[{"value":"b","timestamp":6}]}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  { name: 'a repeated cells', rows: [`{"entityId":[72],"cells":${str('"a"')},"cells":${str('"b"')}}`], expect: 'RG_ERR_BAD_BODY' },
  { name: 'a repeated entityId', rows: [`{"entityId":[73],"entityId":[74],"cells":${str('"a"')}}`], expect: 'RG_ERR_BAD_BODY' },
  {
    name: 'a repeated key in a record value',
    rows: [row(75, '{"group_family":{"inline_record":[{"value":{"username":"a","username":"b","num_purchases":1,"nick":null},"timestamp":5}]}}')],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'a repeated family in the second row of an array',
    rows: [row(76, str('"a"')), row(77, '{"strings":{"a":[{"value":"x","timestamp":5}]},"strings":{"b":[{"value":"y","timestamp":5}]}}')],
    expect: 'RG_ERR_BAD_BODY',
  },

  // Malformed JSON.
  { name: 'a truncated row', rows: ['{"entityId":[50],"cells":{"group_family":'], expect: 'RG_ERR_BAD_BODY' },
  { name: 'a trailing comma', rows: [row(51, '{"group_family":{"string_qualifier":[{"value":"a","timestamp":5},]}}')], expect: 'RG_ERR_BAD_BODY' },
  { name: 'single quotes', rows: ["{'entityId':[52],'cells':{}}"], expect: 'RG_ERR_BAD_BODY' },
  { name: 'a control character in a string', rows: [row(53, str('"a\u0001b"'))], expect: 'RG_ERR_BAD_BODY' },
  { name: 'a bad escape', rows: [row(54, str('"\\x41"'))], expect: 'RG_ERR_BAD_BODY' },
  { name: 'a leading zero', rows: [row(55, '{"longs":{"a":[{"value":007,"timestamp":5}]}}')], expect: 'RG_ERR_BAD_BODY' },
  { name: 'NaN', rows: [row(56, '{"longs":{"a":[{"value":NaN,"timestamp":5}]}}')], expect: 'RG_ERR_BAD_BODY' },
  { name: 'text after the row', rows: [row(57, str('"a"')) + ' x'], expect: 'RG_ERR_BAD_BODY' },
  { name: 'two rows on one line without a comma', rows: [row(58, str('"a"')) + row(59, str('"b"'))], expect: 'RG_ERR_BAD_BODY' },
  {
    name: 'nesting 513 deep',
    rows: [row(60, `{"group_family":{"string_qualifier":[{"value":"d","timestamp":1,"writer_schema":${'['.repeat(508)}"string"${']'.repeat(508)}}]}}`)],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'nesting 512 deep in the second row of an array (513 with the array)',
    rows: [
      row(66, str('"a"')),
      row(67, `{"group_family":{"string_qualifier":[{"value":"d","timestamp":1,"writer_schema":${'['.repeat(507)}"string"${']'.repeat(507)}}]}}`),
    ],
    expect: 'RG_ERR_BAD_BODY',
  },
  {
    name: 'a broken row after good ones',
    rows: [row(61, str('"a"')), row(62, str('"b"')), '{"entityId":[63],"cells":{"group_family":{"string_qualifier":[{"value":}]}}}'],
    expect: 'RG_ERR_BAD_BODY',
  },

  // Rows that are JSON but not rows.
  { name: 'an array as a row', rows: ['[1, 2]'], expect: 'RG_ERR_BAD_BODY' },
  { name: 'a string as a row', rows: ['"row"'], expect: 'RG_ERR_BAD_BODY' },
  { name: 'a bad entity id', rows: ['{"entityId":["x"],"cells":{}}'], expect: 'RG_ERR_BAD_ENTITY_ID' },
  { name: 'a value of the wrong type', rows: [row(64, '{"group_family":{"long_qualifier":[{"value":"seven","timestamp":5}]}}')], expect: 'RG_ERR_BAD_VALUE' },
  { name: 'a negative timestamp', rows: [row(65, str('"a"', -2))], expect: 'RG_ERR_BAD_TIMESTAMP' },
];

/** The HTTP body of a case: its one row as it is, or its rows as an array. */
function bodyOf(c: Case): Buffer {
  if (c.rows.length === 1) return Buffer.from(c.rows[0]!);
  return Buffer.concat([Buffer.from('['), ...c.rows.flatMap((r, i) => (i === 0 ? [Buffer.from(r)] : [Buffer.from(','), Buffer.from(r)])), Buffer.from(']')]);
}

/** A POST sent chunked, `size` bytes a chunk. */
function postChunked(base: string, path: string, body: Buffer, size: number): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: 'POST', path, headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    for (let i = 0; i < body.length; i += size) req.write(body.subarray(i, i + size));
    req.end();
  });
}

/** Every stored cell of a table, with its schema (ids are per store) and server times marked. */
async function cellsOf(store: Store, table: string, since: number): Promise<string[]> {
  const schemas = await store.schemaTable('default');
  const out: string[] = [];
  for await (const rows of store.scan('default', table, { limit: -1, read: { maxVersions: 2147483647, minTimestamp: 0, maxTimestamp: END_OF_TIME } })) {
    for (const r of rows) {
      for (const c of r.cells) {
        const ts = c.timestamp >= since ? 'server time' : c.timestamp;
        out.push(`${r.rowKey.toString('hex')} ${c.family}:${c.qualifier} @${ts} ${await schemas.schemaOf(c.schemaId)} ${c.json}`);
      }
    }
  }
  return out;
}

const tableName = (i: number, path: string): string => `c${i}_${path}`;
const layoutNamed = (name: string) => parseLayout(SAMPLE_LAYOUT.replace('name: "sample_table"', `name: "${name}"`));

const HTTP_PATHS = ['whole', 'chunks1', 'chunks7', 'chunks4096'] as const;

t.test('every body path gives the same verdict and stores the same cells', async (t) => {
  const since = Date.now();
  const h = await startGateway();
  t.teardown(() => h.close());
  for (let i = 0; i < CORPUS.length; i++) for (const p of HTTP_PATHS) await h.store.createTable('default', layoutNamed(tableName(i, p)));

  // The import, into one data directory: the good cases together (their rows have distinct
  // entity ids) into one table; the bad cases of one line together into another with
  // --max-bad-lines (each refused line's reason, in PATH.reasons, is the message a strict import
  // stops with: docs/cli.md), each bad case of several lines on its own (an import stops at its
  // first bad line). The bad table must stay empty; two imports at a time. (One import a bad case
  // was 47 processes, most of this file's 47 s of CPU in CI.)
  const dir = tempDir(t, 'rowgate-body-paths-');
  const data = join(dir, 'data');
  const importStore = new LmdbStore({ path: data, scanThreads: 0 });
  await importStore.createInstance('default');
  for (const name of ['good', 'bad']) await importStore.createTable('default', layoutNamed(name));
  await importStore.close();
  const lines = (c: Case): Buffer[] => c.rows.flatMap((r) => [Buffer.from(r), Buffer.from('\n')]);
  const good = CORPUS.filter((c) => c.expect === 'ok');
  const bad = CORPUS.map((c, i) => [c, i] as const).filter(([c]) => c.expect !== 'ok');
  const oneLine = (c: Case): boolean => c.rows.length === 1 && !Buffer.from(c.rows[0]!).includes(10);
  const together = bad.filter(([c]) => oneLine(c));
  // Jobs: [file name, table, lines, extra flags]; the results by file name.
  const jobs: [string, string, Buffer, string[]][] = [
    ['good', 'good', Buffer.concat(good.flatMap(lines)), []],
    ['one-line', 'bad', Buffer.concat(together.flatMap(([c]) => lines(c))), ['--max-bad-lines', String(together.length)]],
    ...bad.filter(([c]) => !oneLine(c)).map(([c, i]): [string, string, Buffer, string[]] => [`c${i}`, 'bad', Buffer.concat(lines(c)), []]),
  ];
  const imports = new Map<string, CliResult>();
  const lane = async (): Promise<void> => {
    for (let job = jobs.shift(); job !== undefined; job = jobs.shift()) {
      const [name, table, text, flags] = job;
      imports.set(name, await runCli(['import', '--data', data, '--instance', 'default', '--table', table, ...flags, writeFile(dir, `${name}.ndjson`, text)]));
    }
  };
  await Promise.all([lane(), lane()]);
  const oneLineImport = imports.get('one-line')!;
  t.equal(oneLineImport.code, 0, `the one-line bad cases: every line refused, none past the limit: ${oneLineImport.stderr}`);
  // Line k of the file is the k-th one-line case: its reason, as a strict import would print it.
  const reasons = readFileSync(join(dir, 'one-line.ndjson.rejects.reasons'), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  t.equal(reasons.length, together.length, 'one reason a one-line bad case');
  const reasonOf = new Map<number, string>();
  for (const [k, line] of reasons.entries()) {
    t.match(line, new RegExp(`^line ${k + 1}: `), `reason ${k + 1} names its line`);
    reasonOf.set(together[k]![1], line.replace(/^line \d+: /, ''));
  }
  const goodImport = imports.get('good')!;
  const imported = new LmdbStore({ path: data, scanThreads: 0 });
  t.teardown(() => imported.close());
  t.equal(goodImport.code, 0, `the good rows were imported: ${goodImport.stderr}`);
  t.same(await cellsOf(imported, 'bad', since), [], 'no bad case imported anything');

  const goodCells: string[] = [];
  for (let i = 0; i < CORPUS.length; i++) {
    const c = CORPUS[i]!;
    const body = bodyOf(c);
    const answers: Record<string, RawResponse> = {};
    const cells: Record<string, string[]> = {};
    for (const p of HTTP_PATHS) {
      const path = `/v1/instances/default/tables/${tableName(i, p)}/rows`;
      answers[p] =
        p === 'whole'
          ? await raw(h.base, 'POST', path, body, { 'content-type': 'application/json' })
          : await postChunked(h.base, path, body, Number(p.slice('chunks'.length)));
      cells[p] = await cellsOf(h.store, tableName(i, p), since);
    }
    const whole = answers.whole!;
    const verdict = whole.status === 200 ? 'ok' : (JSON.parse(whole.body) as { code: string }).code;
    t.equal(verdict, c.expect, `${c.name}: ${whole.status} ${whole.body.slice(0, 300)}`);
    for (const p of HTTP_PATHS) {
      // Targets name the table, which differs per path.
      t.same(
        { status: answers[p]!.status, body: answers[p]!.body.replaceAll(tableName(i, p), 'T') },
        { status: whole.status, body: whole.body.replaceAll(tableName(i, 'whole'), 'T') },
        `${c.name}: ${p} answers as whole`,
      );
      t.same(cells[p], cells.whole, `${c.name}: ${p} stored the same cells`);
    }
    if (verdict === 'ok') {
      goodCells.push(...cells.whole!);
      if (c.rows.some((r) => String(r).includes('"value"'))) t.ok(cells.whole!.length > 0, `${c.name}: cells were written`);
      continue;
    }
    t.equal(cells.whole!.length, 0, `${c.name}: nothing written`);
    // The same message: a one-row body's row is the import's line (line 1 of its own import), with the same positions.
    const message = (JSON.parse(whole.body) as { exception: string }).exception.replace(/^row \d+: /, '').replace(/^request body /, 'the row ');
    if (oneLine(c)) {
      t.equal(reasonOf.get(i), message, `${c.name}: the import refused the line with the POST's message`);
      continue;
    }
    const imp = imports.get(`c${i}`)!;
    t.equal(imp.code, 1, `${c.name}: import refused it (${imp.stdout})`);
    if (c.rows.length === 1) t.equal(imp.stderr.split('\n')[0], `rowgate import: line 1: ${message}`, `${c.name}: the import's message is the POST's`);
    else t.match(imp.stderr, /^rowgate import: line \d+: /, `${c.name}: the import names the line`);
  }
  // Row keys differ in nothing but the table: the good cases' cells side by side are the import's.
  t.same((await cellsOf(imported, 'good', since)).sort(), goodCells.sort(), 'import stored the cells the POSTs stored');
});
