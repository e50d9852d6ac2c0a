/**
 * Two gateway processes (`tools/rowgate serve`) over one Bigtable emulator: all state is in
 * Bigtable, so a row POSTed to one is read from the other, a table created with the CLI while
 * both run is listed by each, and schemas registered concurrently through both (many racing
 * registrations per schema) get one id each. Skipped, saying what is missing, without the emulator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Bigtable } from '@google-cloud/bigtable';
import t from 'tap';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { BigtableStore } from '../../lib/store/bigtable/bigtable-store.js';
import { CLI, ensureBuilt, ROOT, runCli, tempDir, writeFile } from '../cli/helpers.js';
import { EMULATOR_MISSING, startEmulator, type Emulator } from '../store/bigtable-emulator.js';
import { json, raw, rowsOf, SAMPLE_LAYOUT } from './harness.js';

const ROWS = '/v1/instances/default/tables/sample_table/rows';
const SCHEMAS = '/v1/instances/default/tables/schemas/rows';
/** Ten columns, each with its own record schema: their ids are handed out on first write. */
const SCHEMAS_LAYOUT = JSON.stringify({
  name: 'schemas',
  keys_format: { encoding: 'FORMATTED', salt: { hash_size: 2 }, components: [{ name: 'id', type: 'STRING' }] },
  locality_groups: [
    {
      name: 'default',
      in_memory: false,
      max_versions: 1,
      ttl_seconds: 2147483647,
      compression_type: 'NONE',
      families: [
        {
          name: 'f',
          columns: Array.from({ length: 10 }, (_, i) => ({
            name: `c${i}`,
            column_schema: {
              storage: 'UID',
              type: 'INLINE',
              value: JSON.stringify({ type: 'record', name: `R${i}`, fields: [{ name: `x${i}`, type: 'int' }] }),
            },
          })),
        },
      ],
    },
  ],
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
    await store.close();
    const dir = tempDir(t, 'rowgate-bigtable-');
    const config = join(dir, 'rowgate.yaml');
    writeFileSync(config, 'host: 127.0.0.1\nlogLevel: warn\nstore:\n  kind: bigtable\n  projectId: test\n  instanceId: gw\n  tablePrefix: gw\n');
    const [a, b] = await Promise.all([serve(t, config, emulator), serve(t, config, emulator)]);

    const posted = await raw(a, 'POST', ROWS, JSON.stringify({ entityId: [7], cells: { strings: { k: [{ value: 'from a', timestamp: 3 }] } } }), json);
    t.equal(posted.status, 200, posted.body);
    const read = await raw(b, 'GET', `${ROWS}?eid=${q([7])}`);
    t.equal(read.body, '{"entityId":[7],"cells":{"strings":{"k":[{"timestamp":3,"value":"from a","writer_schema":0}]}}}\r\n', 'written on A, read on B');

    // A table created with the CLI while both gateways run is listed and served by each at once.
    const tablesOf = async (base: string): Promise<string[]> =>
      (JSON.parse((await raw(base, 'GET', '/v1/instances/default/tables')).body) as { name: string }[]).map((x) => x.name).sort();
    t.same(await tablesOf(a), ['sample_table']);
    t.same(await tablesOf(b), ['sample_table']);
    const created = await runCli(['create-table', '--config', config, '--instance', 'default', '--layout', writeFile(dir, 'schemas.json', SCHEMAS_LAYOUT)]);
    t.equal(created.code, 0, created.stderr);
    t.match(created.stdout, /created table schemas in instance default/);
    t.same(await tablesOf(a), ['sample_table', 'schemas'], 'listed by A');
    t.same(await tablesOf(b), ['sample_table', 'schemas'], 'listed by B');

    // Both gateways warmed up (table layout cached, connections open), then each of ten schemas new
    // to the schema table is first used by many concurrent POSTs through both at once.
    for (const base of [a, b]) t.equal((await raw(base, 'GET', `${SCHEMAS}?eid=${q(['warm'])}`)).status, 200);
    const PER_GATEWAY = 6;
    const writes: Promise<{ status: number; body: string }>[] = [];
    for (let k = 0; k < PER_GATEWAY; k++) {
      for (let i = 0; i < 10; i++) {
        for (const [n, base] of [
          [0, a],
          [1, b],
        ] as const) {
          const body = { entityId: [`r${i}-${n}-${k}`], cells: { f: { [`c${i}`]: [{ value: { [`x${i}`]: i }, timestamp: 1 }] } } };
          writes.push(raw(base, 'POST', SCHEMAS, JSON.stringify(body), json));
        }
      }
    }
    const results = await Promise.all(writes);
    t.ok(
      results.every((r) => r.status === 200),
      results.find((r) => r.status !== 200)?.body ?? `all ${results.length} POSTs accepted`,
    );
    const ids: number[][] = [];
    for (let i = 0; i < 10; i++) {
      const eids = [0, 1].flatMap((n) => Array.from({ length: PER_GATEWAY }, (_, k) => [`r${i}-${n}-${k}`]));
      const rows = rowsOf((await raw(i % 2 ? a : b, 'GET', `${SCHEMAS}?eids=${q(eids)}`)).body) as {
        cells: { f: Record<string, { writer_schema: number }[]> };
      }[];
      t.equal(rows.length, 2 * PER_GATEWAY);
      ids.push(rows.map((r) => r.cells.f[`c${i}`]![0]!.writer_schema));
    }
    for (const [i, written] of ids.entries())
      t.equal(new Set(written).size, 1, `schema ${i}: one id through both gateways (${[...new Set(written)].join(', ')})`);
    t.equal(new Set(ids.map((p) => p[0])).size, 10, 'ten schemas, ten ids');
    const meta = JSON.parse((await raw(b, 'GET', '/v1/instances/default')).body) as { schema_table?: { entries: { id: number; avro_schema: string }[] } };
    if (meta.schema_table) {
      const user = meta.schema_table.entries.filter((e) => e.id >= 8);
      t.equal(user.length, 10, 'the schema table holds each schema once');
      t.equal(new Set(user.map((e) => e.avro_schema)).size, 10);
    }
    // How hard they raced: each registration that found no id draws a number from the counter,
    // and only ten are kept; the losers withdrew theirs. (Not asserted above ten: on a loaded
    // machine the requests may be served nearly one after another. Runs here drew 11 to 80.)
    const bigtable = new Bigtable({ projectId: 'test', metricsEnabled: false });
    const [counter] = await bigtable.instance('gw').table('gw.meta').row('schema/default/next').get({ decode: false });
    await bigtable.close();
    // The client hands an 8-byte counter cell over as a number (decode: false or not).
    const value = (counter.data as { m: { n: { value: number | Uint8Array }[] } }).m.n[0]!.value;
    const drawn = typeof value === 'number' ? value : Number(Buffer.from(value).readBigInt64BE(0));
    t.ok(drawn >= 10, `${drawn} numbers drawn for 10 schemas: ${drawn - 10} registrations lost a race and withdrew`);
    t.ok(
      ids.every((written) => written[0]! >= 8 && written[0]! < 8 + drawn),
      'every id is one of the numbers drawn',
    );
  });
}
