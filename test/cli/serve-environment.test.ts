/**
 * `rowgate serve` configured as a container would: environment variables (ROWGATE_CONFIG,
 * ROWGATE_DATA, ROWGATE_PORT / PORT, ROWGATE_LOG_LEVEL) under the flags and over the file, and a
 * relative store.path read against the configuration file's folder whatever the working directory.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ensureBuilt, serveCli, startCli, tempDir, writeFile } from './helpers.js';

const status = async (port: number): Promise<number> => (await fetch(`http://127.0.0.1:${port}/v1/instances/default/tables/users/rows?eid=[1000]`)).status;

t.before(ensureBuilt);

t.test('the environment sets data, port and log level; flags win over it', async (t) => {
  const dir = tempDir(t);
  const env = { ROWGATE_DATA: join(dir, 'env-data'), ROWGATE_PORT: '0', ROWGATE_LOG_LEVEL: 'warn', PORT: '1' };
  const quiet = await serveCli(t, ['--host', '127.0.0.1'], { env });
  t.ok(existsSync(join(dir, 'env-data')), 'ROWGATE_DATA names the data directory');
  t.not(quiet.port, 1, 'ROWGATE_PORT wins over PORT');
  t.equal(await status(quiet.port), 200);
  t.notMatch(quiet.stderr(), /"level":30/, 'ROWGATE_LOG_LEVEL=warn: no info lines');
  t.equal(await quiet.stop(), 0);

  const loud = await serveCli(t, ['--host', '127.0.0.1', '--log-level', 'info', '--data', join(dir, 'flag-data')], { env });
  t.ok(existsSync(join(dir, 'flag-data')), '--data wins over ROWGATE_DATA');
  t.match(loud.stderr(), /"level":30.*created a new data directory/, '--log-level info wins over ROWGATE_LOG_LEVEL');
  t.equal(await loud.stop(), 0);
});

t.test("ROWGATE_CONFIG names the file; its relative store.path is its folder's, not the working directory's", async (t) => {
  const dir = tempDir(t);
  const elsewhere = tempDir(t);
  const config = writeFile(dir, 'rowgate.yaml', 'port: 1\nhost: 127.0.0.1\nlogLevel: warn\nstore: {kind: lmdb, path: ./data}\n');
  const s = await serveCli(t, [], { env: { ROWGATE_CONFIG: config, ROWGATE_PORT: '0' }, cwd: elsewhere });
  t.ok(existsSync(join(dir, 'data')), "store.path resolved against the file's folder");
  t.notOk(existsSync(join(elsewhere, 'data')), 'not against the working directory');
  t.equal(await status(s.port), 200, "ROWGATE_PORT wins over the file's port");
  t.equal(await s.stop(), 0);
});

t.test('a bad environment value stops serve naming the variable', async (t) => {
  const dir = tempDir(t);
  const child = startCli(['serve', '--data', join(dir, 'd')], { env: { PORT: 'eighty' } });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const [code] = await once(child, 'exit');
  t.equal(code, 2);
  t.match(stderr, /^rowgate serve: environment PORT: must be an integer from 0 to 65535, got "eighty"\n$/);
  t.notOk(existsSync(join(dir, 'd')), 'nothing created');
});
