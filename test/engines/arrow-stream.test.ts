/**
 * The Arrow IPC stream of GET rows (`Accept: application/vnd.apache.arrow.stream`) read by the
 * engines users have (issue #30 item 5): pyarrow (ipc.open_stream) and DuckDB (its arrow scan of
 * the same stream) read every table of engine-tables.ts (the four row key formats, every cell
 * type) with the JSON scan's row count, row keys, entity id components, values (the newest
 * version) and nulls for absent cells, in the column types docs/interface.md promises. One Python
 * process reads the four streams. Skips when the engines are missing, fails then in CI (engines.ts).
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { getBytes, raw } from '../http/harness.js';
import { engineGateway, ROWS, rowsPath, TABLES } from './engine-tables.js';
import { engineTest, readBack } from './engines.js';
import { compareWithJson, expectedColumnNames, typeMismatches } from './expected.js';

const ARROW = { accept: 'application/vnd.apache.arrow.stream' };

engineTest(t, 'pyarrow and DuckDB read each key format table from the Arrow stream with the JSON scan values', async (t) => {
  const h = await engineGateway();
  t.teardown(() => h.close());
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-engines-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files: string[] = [];
  const scans = new Map<string, string>();
  for (const table of TABLES) {
    const json = await raw(h.base, 'GET', `${rowsPath(table.name)}?limit=-1`);
    t.equal(json.status, 200);
    scans.set(table.name, json.body);
    const arrow = await getBytes(h.base, `${rowsPath(table.name)}?limit=-1`, ARROW);
    t.equal(arrow.status, 200, `${table.name}: the Arrow stream is served`);
    t.equal(arrow.trailers['x-rowgate-rows'], String(ROWS), `${table.name}: the stream is complete`);
    const file = join(dir, `${table.name}.arrows`);
    writeFileSync(file, arrow.body);
    files.push(file);
  }
  const reads = readBack('arrow', files);
  t.equal(reads.length, files.length * 2, 'each stream read by both engines');
  for (const table of TABLES) {
    const layout = await h.store.getLayout('default', table.name);
    const file = files[TABLES.indexOf(table)]!;
    for (const read of reads.filter((r) => r.file === file)) {
      const what = `${table.name} (${table.encoding} keys), ${read.engine}`;
      t.same(
        read.columns.map(([name]) => name),
        expectedColumnNames(layout),
        `${what}: the columns`,
      );
      t.same(typeMismatches(layout, read), [], `${what}: every column has the type the docs promise`);
      t.equal(read.rows.length, ROWS, `${what}: ${ROWS} rows`);
      const c = compareWithJson(layout, scans.get(table.name)!, read);
      t.same(c.differences, [], `${what}: every value as the JSON scan has it`);
      t.equal(c.same, c.compared, `${what}: ${c.same} of ${c.compared} values equal`);
    }
  }
});
