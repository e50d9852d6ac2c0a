/**
 * avroExportOf (lib/model/avro/avro-export.ts) and the Avro stages (lib/rows/stages/avro.ts),
 * encoding rows from their cells:
 * - a column whose schema the layout does not carry inline holds the value's JSON text, exactly: a
 *   long beyond 2^53 is its digits, not a quoted string (regression: a JSON.stringify replacer
 *   printed bigints as strings, so 9007199254740993 was exported as "9007199254740993");
 * - row_key is the row's key whatever the revision (it was read back from the served documents'
 *   entity ids, where revisions 1-2's shell form `hbase=hex:...` was once misread), and revision 1,
 *   whose cells carry no writer_schema, writes -1.
 */
import t from 'tap';
import { avroExportOf } from '../../lib/model/avro/avro-export.js';
import avro from 'avsc';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { avroBody } from '../../lib/rows/stages/avro.js';
import { decodeRowKey, encodeRowKey } from '../../lib/model/keys/row-key.js';

const LAYOUT_TEXT = `{
  name: "t",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "k", type: "STRING"}]},
  locality_groups: [{name: "default", in_memory: false, max_versions: 1, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "f", columns: [{name: "c", column_schema: {type: "AVRO", default_reader: {uid: 3}}},
      {name: "r", column_schema: {type: "AVRO", default_reader: {json: '{"type": "record", "name": "R", "fields": [{"name": "n", "type": "long"}]}'}}},
      {name: "raw", column_schema: {type: "RAW_BYTES"}}]}]}],
  version: "layout-1.3.0"
}`;
const LAYOUT = parseLayout(LAYOUT_TEXT);

t.test(
  'a column whose schema the layout does not hold (an AVRO reader by uid) holds the exact JSON text of its value, longs beyond 2^53 included',
  async (t) => {
    const exp = avroExportOf(LAYOUT);
    const cells = [{ family: 'f', qualifier: 'c', timestamp: 5, schemaId: 9, json: '{"n":9007199254740993,"s":"x"}' }];
    const row = exp.rowValue({ rowKey: Buffer.from('0001', 'hex'), cells }) as { f: { c: { value: string }[] } };
    t.equal(row.f.c[0]!.value, '{"n":9007199254740993,"s":"x"}');
  },
);

t.test('an AVRO column with an inline default reader and a RAW_BYTES column are typed by the schema their cells are stored in', async (t) => {
  const exp = avroExportOf(LAYOUT);
  const cells = [
    { family: 'f', qualifier: 'r', timestamp: 5, schemaId: 9, json: '{"n":9007199254740993}' },
    { family: 'f', qualifier: 'raw', timestamp: 5, schemaId: 2, json: '"\\u0000\\u00ffa"' },
  ];
  const row = exp.rowValue({ rowKey: Buffer.from('0001', 'hex'), cells }) as { f: { r: { value: unknown }[]; raw: { value: unknown }[] } };
  t.same(row.f.r[0]!.value, { n: 9007199254740993n }, 'a record, its long exact');
  t.same(row.f.raw[0]!.value, Buffer.from([0, 255, 0x61]), 'bytes');
});

const HASH_LAYOUT = parseLayout(`{
  name: "h",
  keys_format: {encoding: "HASH", hash_type: "MD5", hash_size: 16},
  locality_groups: [{name: "default", in_memory: false, max_versions: 1, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "f", columns: [{name: "c", column_schema: {type: "INLINE", storage: "UID", value: '"string"'}}]}]}],
  version: "layout-1.3.0"
}`);

/** The records of an Avro container file, decoded by avsc. */
async function recordsOf<R>(container: Buffer): Promise<R[]> {
  const records: R[] = [];
  await new Promise<void>((resolve, reject) => {
    const decoder = new avro.streams.BlockDecoder();
    decoder.on('data', (r: R) => records.push(r));
    decoder.on('end', () => resolve());
    decoder.on('error', reject);
    decoder.end(container);
  });
  return records;
}

t.test("row_key is the row key, and writer_schema the cell's schema id or -1 without one (revision 1)", async (t) => {
  const rowKey = Buffer.from('00ff10203040506070808a9aaabacadaea', 'hex').subarray(0, 16);
  const cells = [{ family: 'f', qualifier: 'c', timestamp: 7, schemaId: 0, json: '"v"' }];
  for (const withSchema of [true, false]) {
    const container = await avroBody(
      HASH_LAYOUT,
      [
        { rowKey, cells },
        { rowKey: Buffer.alloc(16, 1), cells: [] },
      ],
      withSchema,
    );
    const records = await recordsOf<{ row_key: Buffer; f: { c: { writer_schema: bigint | number }[] } }>(container);
    t.equal(records.length, 2, `withSchema ${withSchema}: two records`);
    t.equal(records[0]!.row_key.toString('hex'), rowKey.toString('hex'), `withSchema ${withSchema}: the row's key`);
    t.equal(Number(records[0]!.f.c[0]!.writer_schema), withSchema ? 0 : -1, `withSchema ${withSchema}: writer_schema`);
    t.same(records[1]!.f.c, [], 'a row without cells: an empty column');
  }
});

t.test('a row whose key its format cannot decode has a null entity_id and its key in row_key; the others their components', async (t) => {
  const good = encodeRowKey(LAYOUT.keyFormat, ['a']);
  // Its STRING component is the invalid UTF-8 C3 28.
  const bad = Buffer.from([good[0]!, good[1]!, 0xc3, 0x28]);
  t.throws(() => decodeRowKey(LAYOUT.keyFormat, bad), 'the key is not of its format');
  const cells = [{ family: 'f', qualifier: 'raw', timestamp: 1, schemaId: 0, json: '"AA=="' }];
  const container = await avroBody(
    LAYOUT,
    [
      { rowKey: good, cells },
      { rowKey: bad, cells },
    ],
    true,
  );
  const records = await recordsOf<{ row_key: Buffer; entity_id: { k: string } | null }>(container);
  t.equal(records.length, 2);
  t.same(records[0]!.entity_id, { k: 'a' });
  t.equal(records[1]!.entity_id, null);
  t.equal(records[1]!.row_key.toString('hex'), bad.toString('hex'));
});

t.test('the export is made once per layout object: the same one for the same layout, a new one for a changed layout', async (t) => {
  const first = avroExportOf(LAYOUT);
  t.equal(avroExportOf(LAYOUT), first, 'the same layout object: the export made for it');
  const changedText = LAYOUT_TEXT.replace('{name: "c", ', `{name: "added", column_schema: {type: "AVRO", default_reader: {json: '"string"'}}}, {name: "c", `);
  t.not(changedText, LAYOUT_TEXT, 'the layout text was changed');
  const next = avroExportOf(parseLayout(changedText));
  t.not(next, first, 'a new layout object (a table whose layout changed): a new export');
  t.match(JSON.stringify(next.type.schema()), /"added"/, 'made from the new layout');
  t.notMatch(JSON.stringify(first.type.schema()), /"added"/, 'the first is unchanged');
});
