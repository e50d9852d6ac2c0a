/**
 * Two gateway processes (`tools/rowgate serve`) over one Bigtable emulator: all state is in
 * Bigtable, so a row POSTed to one is read from the other, and schemas registered concurrently
 * through both get one id each. Skipped, saying what is missing, without the emulator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout.js';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import { CLI, ensureBuilt, ROOT, tempDir } from '../cli/helpers.js';
import { EMULATOR_MISSING, startEmulator, type Emulator } from '../store/bigtable-emulator.js';
import { json, raw, rowsOf, SAMPLE_LAYOUT } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const SCHEMAS = '/v1/instances/default/tables/schemas/rows';
/** Ten columns, each with its own record schema: their ids are handed out on first write. */
const SCHEMAS_LAYOUT = JSON.stringify({
  name: 'schemas',
  keys_format: { encoding: 'FORMATTED', salt: { hash_size: 2 }, components: [{ name: 'id', type: 'STRING' }] },
  locality_groups: [{
    name: 'default', in_memory: false, max_versions: 1, ttl_seconds: 2147483647, compression_type: 'NONE',
    families: [{ name: 'f', columns: Array.from({ length: 10 }, (_, i) => ({
      name: `c${i}`, column_schema: { storage: 'UID', type: 'INLINE', value: JSON.stringify({ type: 'record', name: `R${i}`, fields: [{ name: `x${i}`, type: 'int' }] }) },
    })) }],
  }],
  version: 'layout-1.3.0',
});
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));

/** Starts `rowgate serve` and resolves with its base URL once it prints the listening line. */
function serve(t: { teardown(fn: () => unknown): void }, config: string, emulator: Emulator): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve', '--config', config, '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, ...emulator.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  );
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening:\n${out}\n${err}`)));
  });
}

const emulator = await startEmulator();
if (!emulator) {
  t.test('two gateways on Bigtable', { skip: EMULATOR_MISSING }, async () => undefined);
} else {
  t.teardown(() => emulator.stop());

  t.test('two gateway processes share rows, tables and the schema table', async (t) => {
    await ensureBuilt();
    const store = await BigtableStore.open({ projectId: 'test', instanceId: 'gw', tablePrefix: 'gw' });
    await store.createInstance('default');
    await store.createTable('default', parseLayout(SAMPLE_LAYOUT));
    await store.createTable('default', parseLayout(SCHEMAS_LAYOUT));
    await store.close();
    const dir = tempDir(t, 'rowgate-bigtable-');
    const config = join(dir, 'rowgate.yaml');
    writeFileSync(config, 'host: 127.0.0.1\nlogLevel: warn\nstore:\n  kind: bigtable\n  projectId: test\n  instanceId: gw\n  tablePrefix: gw\n');
    const [a, b] = await Promise.all([serve(t, config, emulator), serve(t, config, emulator)]);

    const posted = await raw(a, 'POST', ROWS, JSON.stringify({ entityId: [7], cells: { strings: { k: [{ value: 'from a', timestamp: 3 }] } } }), json);
    t.equal(posted.status, 200, posted.body);
    const read = await raw(b, 'GET', `${ROWS}?eid=${q([7])}`);
    t.equal(read.body, '{"entityId":[7],"cells":{"strings":{"k":[{"timestamp":3,"value":"from a","writer_schema":0}]}}}\r\n', 'written on A, read on B');

    // Ten column schemas new to the schema table, each first used through both gateways at the same time.
    const writes = [];
    for (let i = 0; i < 10; i++) {
      for (const [n, base] of [[0, a], [1, b]] as const) {
        const body = { entityId: [`r${i}-${n}`], cells: { f: { [`c${i}`]: [{ value: { [`x${i}`]: i }, timestamp: 1 }] } } };
        writes.push(raw(base, 'POST', SCHEMAS, JSON.stringify(body), json));
      }
    }
    const results = await Promise.all(writes);
    t.ok(results.every((r) => r.status === 200), results.find((r) => r.status !== 200)?.body ?? 'all POSTs accepted');
    const ids: number[][] = [];
    for (let i = 0; i < 10; i++) {
      const rows = rowsOf((await raw(i % 2 ? a : b, 'GET', `${SCHEMAS}?eids=${q([[`r${i}-0`], [`r${i}-1`]])}`)).body) as { cells: { f: Record<string, { writer_schema: number }[]> } }[];
      ids.push(rows.map((r) => r.cells.f[`c${i}`]![0]!.writer_schema));
    }
    for (const [i, pair] of ids.entries()) t.equal(pair[0], pair[1], `schema ${i}: one id through both gateways (${pair.join(', ')})`);
    t.equal(new Set(ids.map((p) => p[0])).size, 10, 'ten schemas, ten ids');
    const meta = JSON.parse((await raw(b, 'GET', '/v1/instances/default')).body) as { schema_table?: { entries: { id: number; avro_schema: string }[] } };
    if (meta.schema_table) {
      const user = meta.schema_table.entries.filter((e) => e.id >= 8);
      t.equal(user.length, 10, 'the schema table holds each schema once');
      t.equal(new Set(user.map((e) => e.avro_schema)).size, 10);
    }
  });
}
