/**
 * `rowgate export --format avro --codec null|deflate`: the deflate file is read back by Apache
 * Avro's Python reader with the same records as the uncompressed one (and as the gateway's rows),
 * names its codec in the header, and is smaller; locally and with --url --parallel. --codec with
 * another format, or an unknown codec, is bad usage (exit 2).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { raw } from '../http/harness.js';
import { expectedAvroRecords } from '../http/suites/avro-expected.js';
import { AVRO_READER_MISSING, hasPythonAvro, readWithPythonAvro } from '../support/python-avro.js';
import { filledGateway } from './export-fixtures.js';
import { ensureBuilt, runCli, tempDir } from './helpers.js';

t.before(ensureBuilt);

const TABLE = ['--instance', 'default', '--table', 'sample_table'];
const ROWS_PATH = '/v1/instances/default/tables/sample_table/rows';

/** The avro.codec entry of a container file's header (it is near the start, as plain text). */
function codecOf(path: string): string | undefined {
  const head = readFileSync(path).subarray(0, 4096).toString('latin1');
  return /avro\.codec[\s\S]([a-z]+)/.exec(head)?.[1];
}

t.test('--codec deflate writes a smaller file python3-avro reads with the same records, locally and with --url', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const full = (await raw(h.base, 'GET', `${ROWS_PATH}?limit=-1`)).body;
  for (const [what, source] of [
    ['local', ['--data', join(dir, 'data')]],
    ['--url --parallel 3', ['--url', h.base, '--parallel', '3']],
  ] as const) {
    const sizes: Record<string, number> = {};
    for (const codec of ['null', 'deflate']) {
      const out = join(dir, `${what.length}-${codec}.avro`);
      const r = await runCli(['export', ...source, ...TABLE, '--format', 'avro', '--codec', codec, '--out', out]);
      t.equal(r.code, 0, r.stderr);
      t.equal(codecOf(out), codec, `${what}: the header names codec ${codec}`);
      sizes[codec] = readFileSync(out).length;
      if (hasPythonAvro()) t.same(readWithPythonAvro(out).records, expectedAvroRecords(full), `${what} ${codec}: python3-avro reads every row's cells`);
    }
    t.ok(sizes.deflate! < sizes.null!, `${what}: deflate ${sizes.deflate} bytes < null ${sizes.null}`);
  }
  if (!hasPythonAvro()) t.comment(`not read back: ${AVRO_READER_MISSING}`);
});

t.test('--codec is refused with a format that has none, and an unknown codec is refused', async (t) => {
  const dir = tempDir(t);
  await filledGateway(t, dir);
  const local = ['--data', join(dir, 'data'), ...TABLE];
  const json = await runCli(['export', ...local, '--codec', 'deflate']);
  t.equal(json.code, 2);
  t.match(json.stderr, /--codec compresses an Avro file's blocks: give --format avro \(the json format has no codec\)/);
  const unknown = await runCli(['export', ...local, '--format', 'avro', '--codec', 'lz4']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /--codec/);
});
