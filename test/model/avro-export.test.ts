/**
 * avroExportOf (lib/model/avro/avro-export.ts) and the Avro stage (lib/rows/row-formats.ts):
 * - a column whose schema the layout does not carry inline holds the value's JSON text, exactly: a
 *   long beyond 2^53 is its digits, not a quoted string (regression: a JSON.stringify replacer
 *   printed bigints as strings, so 9007199254740993 was exported as "9007199254740993");
 * - row_key is read back from documents in the served revision's entity id form (regression: the
 *   revision 3 parser read revisions 1-2's shell form, `hbase=hex:...`, as escaped text).
 */
import t from 'tap';
import { avroExportOf } from '../../lib/model/avro/avro-export.js';
import avro from 'avsc';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { Revision } from '../../lib/config/config.js';
import { entityIdOfDocument, rowSerializer } from '../../lib/rows/row-format.js';
import { formatBody } from '../../lib/rows/row-formats.js';

const LAYOUT_TEXT = `{
  name: "t",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "k", type: "STRING"}]},
  locality_groups: [{name: "default", in_memory: false, max_versions: 1, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "f", columns: [{name: "c", column_schema: {type: "AVRO", default_reader: {json: '"string"'}}}]}]}],
  version: "layout-1.3.0"
}`;
const LAYOUT = parseLayout(LAYOUT_TEXT);

t.test('an untyped column holds the exact JSON text of its value, longs beyond 2^53 included', async (t) => {
  const exp = avroExportOf(LAYOUT);
  const document = '{"entityId":["a"],"cells":{"f":{"c":[{"timestamp":5,"value":{"n":9007199254740993,"s":"x"},"writer_schema":9}]}}}';
  const row = exp.rowValue(document, entityIdOfDocument(document, LAYOUT.keyFormat, 3)) as { f: { c: { value: string }[] } };
  t.equal(row.f.c[0]!.value, '{"n":9007199254740993,"s":"x"}');
});

const HASH_LAYOUT = parseLayout(`{
  name: "h",
  keys_format: {encoding: "HASH", hash_type: "MD5", hash_size: 16},
  locality_groups: [{name: "default", in_memory: false, max_versions: 1, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "f", columns: [{name: "c", column_schema: {type: "INLINE", storage: "UID", value: '"string"'}}]}]}],
  version: "layout-1.3.0"
}`);

t.test("row_key comes from the entity id in the served revision's form (revisions 1 and 2 write HASH keys as hbase=hex:...)", async (t) => {
  const rowKey = Buffer.from('00ff10203040506070808a9aaabacadaea', 'hex').subarray(0, 16);
  for (const revision of [1, 2, 3] as Revision[]) {
    const document = rowSerializer(HASH_LAYOUT.keyFormat, revision)({ rowKey, cells: [] });
    const container = await formatBody('avro', HASH_LAYOUT, Buffer.from(`${document}\r\n`), revision);
    const records: { row_key: Buffer }[] = [];
    await new Promise<void>((resolve, reject) => {
      const decoder = new avro.streams.BlockDecoder();
      decoder.on('data', (r: { row_key: Buffer }) => records.push(r));
      decoder.on('end', () => resolve());
      decoder.on('error', reject);
      decoder.end(container);
    });
    t.equal(records.length, 1, `revision ${revision}: one record (${document})`);
    t.equal(records[0]!.row_key.toString('hex'), rowKey.toString('hex'), `revision ${revision}: the row's key`);
  }
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
