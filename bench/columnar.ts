/**
 * Scenario 1's export formats (issue #30): `rowgate export` of the bench table as Avro (codec null)
 * against the same export as JSON, each a whole `rowgate export --data` process as a user runs it,
 * best of `runs`, alternated so both see the same machine; plus the Avro file's size with
 * `--codec deflate`. Goal: Avro >= 0.5x the JSON export's rows/s. Parquet (snappy) the same way,
 * alternated with the other two; its goals (run.ts): >= 1.0x PostgreSQL's COPY-as-JSON rows/s and a
 * file at least 3x smaller than the JSON export's.
 *
 * `node dist/bench/columnar.js DATA_DIR ROWS` runs it alone and prints the figure as JSON.
 */
import { rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_INSTANCE, BENCH_TABLE } from './dataset.js';
import { run } from './harness.js';

export interface ExportFormatsFigure {
  readonly rows: number;
  readonly jsonSeconds: number;
  readonly avroSeconds: number;
  readonly jsonBytes: number;
  readonly avroBytes: number;
  readonly avroDeflateBytes: number;
  readonly parquetSeconds: number;
  readonly parquetBytes: number;
  /** Avro's rows/s over JSON's: the goal is at least 0.5. */
  readonly ratio: number;
}

export async function exportFormatsFigure(cli: string, data: string, rows: number, runs: number, tmp = tmpdir()): Promise<ExportFormatsFigure> {
  const out = join(tmp, 'columnar-export');
  const timed = async (args: readonly string[]): Promise<{ seconds: number; bytes: number }> => {
    const t0 = performance.now();
    await run(process.execPath, [cli, 'export', '--data', data, '--instance', BENCH_INSTANCE, '--table', BENCH_TABLE, '--out', out, ...args], 600_000);
    const seconds = (performance.now() - t0) / 1000;
    const bytes = statSync(out).size;
    rmSync(out, { force: true });
    return { seconds, bytes };
  };
  const json: { seconds: number; bytes: number }[] = [];
  const avro: { seconds: number; bytes: number }[] = [];
  const parquet: { seconds: number; bytes: number }[] = [];
  for (let i = 0; i < runs; i++) {
    json.push(await timed(['--format', 'json']));
    avro.push(await timed(['--format', 'avro']));
    parquet.push(await timed(['--format', 'parquet']));
  }
  const deflate = await timed(['--format', 'avro', '--codec', 'deflate']);
  const jsonSeconds = Math.min(...json.map((r) => r.seconds));
  const avroSeconds = Math.min(...avro.map((r) => r.seconds));
  return {
    rows,
    jsonSeconds,
    avroSeconds,
    jsonBytes: json[0]!.bytes,
    avroBytes: avro[0]!.bytes,
    avroDeflateBytes: deflate.bytes,
    parquetSeconds: Math.min(...parquet.map((r) => r.seconds)),
    parquetBytes: parquet[0]!.bytes,
    ratio: jsonSeconds / avroSeconds,
  };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [data, rows] = process.argv.slice(2);
  if (data === undefined || rows === undefined) throw new Error('usage: node dist/bench/columnar.js DATA_DIR ROWS');
  const cli = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tools', 'rowgate');
  console.log(JSON.stringify(await exportFormatsFigure(cli, data, Number(rows), Number(process.env.BENCH_RUNS ?? 3))));
}
