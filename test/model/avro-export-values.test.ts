/**
 * The Avro export's primitive values read from their JSON text without the exact parser
 * (avro-export.ts fastDecoder) equal what the general path (avroFromJson over parseExactJson)
 * makes of the same text: strings with and without escapes, ints, longs below and beyond 2^53,
 * doubles and floats in every JSON number form, booleans; and a value that does not match its
 * column's schema is still refused by name. The container round-trips through avsc's decoder.
 */
import t from 'tap';
import avro from 'avsc';
import { avroExportOf } from '../../lib/model/avro/avro-export.js';
import { avroFromJson } from '../../lib/model/avro/avro-json.js';
import { buildAvroType } from '../../lib/model/avro/avro-types.js';
import { parseExactJson } from '../../lib/model/json/exact-json.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { avroBody } from '../../lib/rows/stages/avro.js';

const TYPES = ['string', 'int', 'long', 'double', 'float', 'boolean'] as const;
const column = (type: string): string => `{name: "${type}", column_schema: {type: "INLINE", storage: "UID", value: '"${type}"'}}`;
const LAYOUT = parseLayout(`{
  name: "v",
  keys_format: {encoding: "RAW"},
  locality_groups: [{name: "default", in_memory: false, max_versions: 10, ttl_seconds: 2147483647, compression_type: "NONE",
    families: [{name: "f", columns: [${TYPES.map(column).join(', ')}]}]}],
  version: "layout-1.3.0"
}`);

const VALUES: Record<(typeof TYPES)[number], readonly string[]> = {
  string: ['"plain"', '""', '"a\\"b"', '"tab\\tand \\u00e9 \\ud83d\\ude00"', '"back\\\\slash"', '"é ü 😀"'],
  int: ['0', '-0', '2147483647', '-2147483648', '1.0', '1e3'],
  long: ['0', '-7', '999999999999999', '-999999999999999', '9007199254740993', '-9223372036854775808', '9223372036854775807'],
  double: ['0', '-0', '1.5', '1e300', '-2.5E-10', '123456789012345678901234567890', '0.1'],
  float: ['0', '1.5', '3.4028234663852886e38', '0.1', '-1e-30'],
  boolean: ['true', 'false'],
};

t.test('each primitive value equals what the general path makes of its JSON text', async (t) => {
  const exp = avroExportOf(LAYOUT);
  for (const type of TYPES) {
    const valueType = buildAvroType(type);
    const cells = VALUES[type].map((json, i) => ({ family: 'f', qualifier: type, timestamp: 100 - i, schemaId: 1, json }));
    const row = exp.rowValue({ rowKey: Buffer.from('k'), cells }) as { f: Record<string, { value: unknown }[]> };
    VALUES[type].forEach((json, i) => {
      const general = avroFromJson(valueType, parseExactJson(json, 'value'), true);
      const got = row.f[type]![i]!.value;
      // Longs are numbers where safe, bigints beyond: the same integer either way.
      t.same(typeof got === 'number' && typeof general === 'bigint' ? BigInt(got) : got, general, `${type} ${json}`);
    });
  }
});

t.test('a value that does not match its column is refused, naming the column', async (t) => {
  const exp = avroExportOf(LAYOUT);
  for (const [type, json] of [
    ['int', '2147483648'],
    ['int', '"1"'],
    ['string', '12'],
    ['double', 'true'],
    ['long', '1.5'],
    ['boolean', '1'],
  ] as const) {
    t.throws(
      () => exp.rowValue({ rowKey: Buffer.from('k'), cells: [{ family: 'f', qualifier: type, timestamp: 1, schemaId: 1, json }] }),
      /cannot export column f:/,
      `${type} ${json}`,
    );
  }
});

t.test('the container decodes (with the export type) to the same values, longs exact and timestamps beyond 2^53 kept', async (t) => {
  const cells = [
    { family: 'f', qualifier: 'long', timestamp: 2n ** 60n, schemaId: 1, json: '9223372036854775807' },
    { family: 'f', qualifier: 'long', timestamp: 5, schemaId: 1, json: '-12' },
    { family: 'f', qualifier: 'string', timestamp: 5, schemaId: 1, json: '"a\\nb"' },
  ];
  const body = await avroBody(LAYOUT, [{ rowKey: Buffer.from('k'), cells }], true);
  const records: { f: Record<string, { timestamp: bigint; value: unknown }[]> }[] = [];
  await new Promise<void>((resolve, reject) => {
    const decoder = new avro.streams.BlockDecoder({ parseHook: () => avroExportOf(LAYOUT).type });
    decoder.on('data', (r: (typeof records)[number]) => records.push(r));
    decoder.on('end', () => resolve());
    decoder.on('error', reject);
    decoder.end(body);
  });
  t.equal(records.length, 1);
  const longs = records[0]!.f.long!;
  t.equal(String(longs[0]!.timestamp), String(2n ** 60n));
  t.equal(String(longs[0]!.value), '9223372036854775807');
  t.equal(Number(longs[1]!.value), -12);
  t.equal(records[0]!.f.string![0]!.value, 'a\nb');
});
