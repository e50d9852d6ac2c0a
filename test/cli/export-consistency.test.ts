/**
 * What an export guarantees while rows are written (docs/cli.md, "What an export guarantees while others write"): run against rows that are
 * rewritten, inserted and deleted during a slowed-down `export --url --parallel 4` (and a resumed
 * one), the file still has every row at most once, in key order; every row untouched during the
 * export exactly as it was; and every row whole: all its cells from one write, never a mix.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { rowKeyOfDocument } from '../../lib/rows/row-format.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import { encodeRowKey } from '../../lib/model/keys/row-key.js';
import type { RowWrite } from '../../lib/model/types.js';
import { raw, SAMPLE_LAYOUT } from '../http/harness.js';
import { filledGateway, slowProxy } from './export-fixtures.js';
import { CLI, ensureBuilt, ROOT, runCli, tempDir } from './helpers.js';

t.before(ensureBuilt);

const TABLE = ['--instance', 'default', '--table', 'sample_table'];
const format = parseLayout(SAMPLE_LAYOUT).keyFormat;
const ROWS = 3000;

/** Row i's key in filledGateway's table. */
const keyOf = (i: number): Buffer => encodeRowKey(format, [BigInt(i) * 1_000_003n]);

/** A whole-row rewrite: three cells that all carry the version `v`. */
function rewrite(i: number, v: number): RowWrite {
  return {
    rowKey: keyOf(i),
    cells: [
      { kind: 'value', family: 'strings', qualifier: 'a', timestamp: 5_000_000 + v, schemaId: 0, json: JSON.stringify(`v${v}`) },
      { kind: 'value', family: 'strings', qualifier: 'b', timestamp: 5_000_000 + v, schemaId: 0, json: JSON.stringify(`v${v}`) },
      { kind: 'value', family: 'longs', qualifier: 'v', timestamp: 5_000_000 + v, schemaId: 3, json: String(v) },
    ],
  };
}

t.test('rows written during a parallel (and a resumed) export: at most once, in order, untouched rows exact, every row whole', async (t) => {
  const dir = tempDir(t);
  const h = await filledGateway(t, dir);
  const before = (await raw(h.base, 'GET', '/v1/instances/default/tables/sample_table/rows?limit=-1&versions=1')).body.split('\r\n').slice(0, -1);
  const byKey = new Map(before.map((doc) => [rowKeyOfDocument(Buffer.from(doc), format, 3).toString('hex'), doc]));
  // Rows i % 3 === 0 are rewritten (whole) again and again; i % 3 === 1 are never touched;
  // i % 3 === 2 are deleted one by one; new rows are inserted past the old ids.
  await h.store.write(
    'default',
    'sample_table',
    Array.from({ length: ROWS / 3 }, (_, k) => rewrite(3 * k, 0)),
  );
  const stableDocs = new Map<string, string>();
  for (let i = 1; i < ROWS; i += 3) stableDocs.set(keyOf(i).toString('hex'), byKey.get(keyOf(i).toString('hex'))!);
  t.equal(stableDocs.size, ROWS / 3);
  const slow = await slowProxy(t, h.base, 2048);

  for (const resume of [false, true]) {
    const out = join(dir, `export-${resume}.json`);
    const args = ['export', '--url', slow, ...TABLE, '--parallel', '4', '--versions', '1', '--out', out];
    let writing = true;
    const writer = (async () => {
      let v = 1;
      for (let round = 0; writing && round < 10_000; round++, v++) {
        const batch: RowWrite[] = [];
        for (let k = 0; k < 50; k++) batch.push(rewrite(3 * ((round * 50 + k) % (ROWS / 3)), v));
        batch.push({
          rowKey: keyOf(ROWS + round),
          cells: [{ kind: 'value', family: 'longs', qualifier: 'n', timestamp: 1, schemaId: 3, json: String(round) }],
        });
        await h.store.write('default', 'sample_table', batch);
        await h.store.delete('default', 'sample_table', [{ rowKey: keyOf(3 * (round % (ROWS / 3)) + 2) }]);
        await sleep(2);
      }
    })();
    if (resume) {
      // Stopped a third of the way, then resumed: the resumed part reads newer rows.
      const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      for (let waited = 0; waited < 30_000 && !(existsSync(`${out}.partial`) && statSync(`${out}.partial`).size > 200_000); waited += 5) await sleep(5);
      child.kill('SIGINT');
      t.equal(await closed, 130, `stopped by Ctrl-C (its stderr: ${stderr.trim()})`);
      const r = await runCli([...args.slice(0, 2), h.base, ...args.slice(3), '--resume']);
      t.equal(r.code, 0, r.stderr);
      t.match(r.stderr, /resumed after \d+ rows/);
    } else {
      const r = await runCli(args);
      t.equal(r.code, 0, r.stderr);
    }
    writing = false;
    await writer;

    const docs = readFileSync(out, 'utf8').split('\r\n').slice(0, -1);
    const keys = docs.map((doc) => rowKeyOfDocument(Buffer.from(doc), format, 3));
    let ordered = true;
    for (let i = 1; i < keys.length; i++) if (Buffer.compare(keys[i - 1]!, keys[i]!) >= 0) ordered = false;
    t.ok(ordered, `${resume ? 'resumed' : 'parallel'}: ${docs.length} rows, strictly ascending keys (none twice)`);
    const got = new Map(keys.map((k, i) => [k.toString('hex'), docs[i]!]));
    let exact = 0;
    for (const [key, doc] of stableDocs) if (got.get(key) === doc) exact++;
    t.equal(exact, stableDocs.size, 'every row untouched during the export: present, exactly as it was');
    let whole = 0;
    let rewritten = 0;
    for (let i = 0; i < ROWS; i += 3) {
      const doc = got.get(keyOf(i).toString('hex'));
      if (doc === undefined) continue;
      rewritten++;
      const row = JSON.parse(doc) as { cells: { strings: Record<string, { value: string }[]>; longs: Record<string, { value: number }[]> } };
      const v = row.cells.longs.v![0]!.value;
      if (row.cells.strings.a![0]!.value === `v${v}` && row.cells.strings.b![0]!.value === `v${v}`) whole++;
    }
    t.equal(rewritten, ROWS / 3, 'every row rewritten during the export is present once');
    t.equal(whole, rewritten, 'each of them whole: its three cells from one write');
  }
});
