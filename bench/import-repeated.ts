/**
 * Scenario 3's repeated keys figure (issue #28 goal 4): an import whose lines revisit rows, 250,000
 * lines over 20,000 row keys of the bench table (each line the row's five cells at a timestamp of
 * its own, so a row gathers versions up to max_versions), against an import of 250,000 lines of
 * unique rows, each into a fresh data directory by `rowgate import` as a user runs it. Goal: the
 * repeated import within 2x of the unique one. Best of `runs` each, alternated so both see the
 * same machine.
 *
 * `node dist/bench/import-repeated.js` runs it alone and prints the figure as JSON.
 */
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_INSTANCE, BENCH_LAYOUT, BENCH_TABLE, benchRowCells } from './dataset.js';
import { run } from './harness.js';

export const REPEATED_LINES = 250_000;
export const REPEATED_KEYS = 20_000;

export interface RepeatedFigure {
  readonly lines: number;
  readonly keys: number;
  readonly repeatedSeconds: number;
  readonly uniqueSeconds: number;
  /** repeatedSeconds / uniqueSeconds: the goal is at most 2. */
  readonly ratio: number;
}

/** Line `i` on row `id`: the bench row's values, at a timestamp of the line's own. */
function lineOf(id: number, i: number): string {
  const { values } = benchRowCells(id);
  const cell = (v: string): string => `[{"timestamp":${1_700_000_000_000 + i},"value":${v}}]`;
  return `{"entityId":[${id}],"cells":{"d":{"a":${cell(values.a!)},"b":${cell(values.b!)},"c":${cell(values.c!)},"e":${cell(values.e!)},"f":${cell(values.f!)}}}}\n`;
}

async function writeLines(path: string, idOf: (i: number) => number): Promise<void> {
  const out = createWriteStream(path);
  let chunk = '';
  for (let i = 0; i < REPEATED_LINES; i++) {
    chunk += lineOf(idOf(i), i);
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
      chunk = '';
    }
  }
  out.write(chunk);
  await new Promise<void>((res, rej) => out.end((e?: Error | null) => (e ? rej(e) : res())));
}

/** Seconds of one `rowgate import` of `file` into a fresh data directory under `tmp`. */
async function importSeconds(cli: string, tmp: string, layoutFile: string, file: string): Promise<number> {
  const data = join(tmp, 'repeated-data');
  rmSync(data, { recursive: true, force: true });
  await run(process.execPath, [cli, 'create-table', '--instance', BENCH_INSTANCE, '--layout', layoutFile, '--data', data], 60_000);
  const start = performance.now();
  await run(process.execPath, [cli, 'import', '--instance', BENCH_INSTANCE, '--table', BENCH_TABLE, '--data', data, file], 600_000);
  const seconds = (performance.now() - start) / 1000;
  rmSync(data, { recursive: true, force: true });
  return seconds;
}

export async function repeatedKeysFigure(cli: string, tmp: string, runs: number): Promise<RepeatedFigure> {
  const layoutFile = join(tmp, 'repeated-layout.json');
  writeFileSync(layoutFile, BENCH_LAYOUT);
  const repeated = join(tmp, 'repeated.ndjson');
  const unique = join(tmp, 'unique.ndjson');
  await writeLines(repeated, (i) => i % REPEATED_KEYS);
  await writeLines(unique, (i) => i);
  await run('sync', [], 300_000);
  let repeatedSeconds = Infinity;
  let uniqueSeconds = Infinity;
  try {
    for (let i = 0; i < runs; i++) {
      uniqueSeconds = Math.min(uniqueSeconds, await importSeconds(cli, tmp, layoutFile, unique));
      repeatedSeconds = Math.min(repeatedSeconds, await importSeconds(cli, tmp, layoutFile, repeated));
    }
  } finally {
    rmSync(repeated, { force: true });
    rmSync(unique, { force: true });
  }
  return { lines: REPEATED_LINES, keys: REPEATED_KEYS, repeatedSeconds, uniqueSeconds, ratio: repeatedSeconds / uniqueSeconds };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const here = dirname(fileURLToPath(import.meta.url));
  const tmp = mkdtempSync(join(tmpdir(), 'rowgate-repeated-'));
  repeatedKeysFigure(join(here, '..', 'tools', 'rowgate-cli.js'), tmp, 3)
    .then((f) => process.stdout.write(`${JSON.stringify(f)}\n`))
    .finally(() => rmSync(tmp, { recursive: true, force: true }));
}
