/**
 * The benchmark's table and rows: FORMATTED keys (2-byte hash salt + one LONG), one family `d`
 * with five typed columns and one version each, so a row is about 340 bytes of revision 3 JSON.
 * Rows are generated deterministically from their id.
 */
import { createWriteStream } from 'node:fs';

export const BENCH_INSTANCE = 'bench';
export const BENCH_TABLE = 't';
export const CELLS_PER_ROW = 5;
const BASE_TS = 1_700_000_000_000;

export const BENCH_LAYOUT = JSON.stringify({
  name: BENCH_TABLE,
  description: 'rowgate benchmark table',
  keys_format: { encoding: 'FORMATTED', salt: { hash_size: 2 }, components: [{ name: 'id', type: 'LONG' }] },
  locality_groups: [
    {
      name: 'default',
      in_memory: false,
      max_versions: 3,
      ttl_seconds: 2147483647,
      compression_type: 'NONE',
      families: [
        {
          name: 'd',
          columns: [
            { name: 'a', column_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } },
            { name: 'b', column_schema: { storage: 'UID', type: 'INLINE', value: '"long"' } },
            { name: 'c', column_schema: { storage: 'UID', type: 'INLINE', value: '"double"' } },
            { name: 'e', column_schema: { storage: 'UID', type: 'INLINE', value: '"int"' } },
            { name: 'f', column_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } },
          ],
        },
      ],
    },
  ],
  version: 'layout-1.3.0',
});

/** One row's cells: the shared timestamp and each column's value as wire JSON (qualifier -> JSON). */
export function benchRowCells(id: number): { timestamp: number; values: Record<string, string> } {
  return {
    timestamp: BASE_TS + id,
    values: { a: `"user-${id}"`, b: String(id * 7919), c: String((id % 100000) / 8), e: String(id % 1000), f: `"s${id % 97}"` },
  };
}

/** One row in the POST shape (what import and POST read), as compact JSON text. */
export function benchRowJson(id: number): string {
  const { timestamp, values } = benchRowCells(id);
  const cell = (v: string): string => `[{"timestamp":${timestamp},"value":${v}}]`;
  return `{"entityId":[${id}],"cells":{"d":{"a":${cell(values.a!)},"b":${cell(values.b!)},"c":${cell(values.c!)},"e":${cell(values.e!)},"f":${cell(values.f!)}}}}`;
}

/** Writes `rows` rows (ids 0 .. rows-1) as NDJSON; resolves with the bytes written. */
export async function writeNdjson(path: string, rows: number): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  let chunk = '';
  for (let id = 0; id < rows; id++) {
    chunk += benchRowJson(id) + '\n';
    if (chunk.length > 1 << 20) {
      bytes += chunk.length;
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      chunk = '';
    }
  }
  bytes += chunk.length;
  out.write(chunk);
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return bytes;
}

/** One row as PostgreSQL text-format COPY input: id, ts, a, b, c, e, f (the same values, typed columns). */
export function benchRowTsv(id: number): string {
  const { timestamp, values } = benchRowCells(id);
  const text = (json: string): string => JSON.parse(json) as string;
  return `${id}\t${timestamp}\t${text(values.a!)}\t${values.b}\t${values.c}\t${values.e}\t${text(values.f!)}\n`;
}

/** Writes `rows` rows (ids 0 .. rows-1) as PostgreSQL COPY text. */
export async function writeTsv(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  let chunk = '';
  for (let id = 0; id < rows; id++) {
    chunk += benchRowTsv(id);
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      chunk = '';
    }
  }
  out.write(chunk);
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

/** Scenario 6's table: RAW keys, one map family of strings, one version kept. */
export const WIDE_LAYOUT = JSON.stringify({
  name: 'wide',
  keys_format: { encoding: 'RAW' },
  locality_groups: [
    {
      name: 'default',
      in_memory: false,
      max_versions: 1,
      ttl_seconds: 2147483647,
      compression_type: 'NONE',
      families: [{ name: 'm', map_schema: { storage: 'UID', type: 'INLINE', value: '"string"' } }],
    },
  ],
  version: 'layout-1.0.0',
});

/** One row of `qualifiers` map-family cells of about 40 bytes, in the POST shape. */
export function wideRowJson(row: string, qualifiers: number): string {
  const cells: Record<string, { timestamp: number; value: string }[]> = {};
  for (let q = 0; q < qualifiers; q++) cells[`q${String(q).padStart(6, '0')}`] = [{ timestamp: BASE_TS + q, value: `value ${q} of row ${row}` }];
  return JSON.stringify({ entityId: `rowkey=${row}`, cells: { m: cells } });
}
