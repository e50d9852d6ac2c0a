/**
 * What python3-avro should read back from an Avro export of the sample table (avro-export.ts's
 * schema), computed from the JSON row stream: one JSON line per record, keys sorted, bytes as hex.
 */
import { parseLayout } from '../../../lib/model/layout/layout.js';
import { parseExactJson, stringifyExactJson } from '../../../lib/model/json/exact-json.js';
import type { JsonValue } from '../../../lib/model/types.js';
import { rowKeyOfDocument } from '../../../lib/rows/row-format.js';
import { SAMPLE_LAYOUT } from '../harness.js';

const layout = parseLayout(SAMPLE_LAYOUT);

function sorted(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(sorted);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sorted((v as Record<string, JsonValue>)[k]!)]),
    );
  return v;
}

export function expectedAvroRecords(stream: string): string[] {
  return stream
    .split('\r\n')
    .slice(0, -1)
    .map((doc) => {
      const row = parseExactJson(doc, 'row') as { entityId: JsonValue[]; cells: Record<string, Record<string, JsonValue[]>> };
      const cells = (fam: string, q: string) => (row.cells[fam]?.[q] ?? []) as JsonValue[];
      const group: Record<string, JsonValue> = {};
      for (const c of ['string_qualifier', 'long_qualifier', 'union_qualifier', 'inline_record', 'counter']) group[c] = cells('group_family', c);
      const rec: Record<string, JsonValue> = {
        row_key: rowKeyOfDocument(Buffer.from(doc), layout.keyFormat, 3).toString('hex'),
        entity_id: { id: row.entityId[0]! },
        group_family: group,
        strings: row.cells.strings ?? {},
        longs: row.cells.longs ?? {},
      };
      return stringifyExactJson(sorted(rec)).replace(/,/g, ', ').replace(/":/g, '": ');
    });
}
