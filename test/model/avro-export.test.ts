/**
 * avroExportOf (lib/model/avro-export.ts): a column whose schema the layout does not carry inline
 * holds the value's JSON text, exactly: a long beyond 2^53 is its digits, not a quoted string
 * (regression: a JSON.stringify replacer printed bigints as strings, so 9007199254740993 was
 * exported as "9007199254740993", which is not the value's JSON).
 */
import t from 'tap';
import { avroExportOf } from '../../lib/model/avro-export.js';
import { parseLayout } from '../../lib/model/layout.js';

const LAYOUT = parseLayout(`{
  name: "t",
  keys_format: {encoding: "FORMATTED", salt: {hash_size: 2}, components: [{name: "k", type: "STRING"}]},
  locality_groups: [{name: "default", in_memory: false, max_versions: 1, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "f", columns: [{name: "c", column_schema: {type: "AVRO", default_reader: {json: '"string"'}}}]}]}],
  version: "layout-1.3.0"
}`);

t.test('an untyped column holds the exact JSON text of its value, longs beyond 2^53 included', async (t) => {
  const exp = avroExportOf(LAYOUT);
  const document = '{"entityId":["a"],"cells":{"f":{"c":[{"timestamp":5,"value":{"n":9007199254740993,"s":"x"},"writer_schema":9}]}}}';
  const row = exp.rowValue(document) as { f: { c: { value: string }[] } };
  t.equal(row.f.c[0]!.value, '{"n":9007199254740993,"s":"x"}');
});
