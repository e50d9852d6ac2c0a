/**
 * The Arrow IPC stream of GET rows (`Accept: application/vnd.apache.arrow.stream`) read by the
 * engines users have (issue #30 item 5): pyarrow (ipc.open_stream) and DuckDB (its arrow scan of
 * the same stream) read every table of engine-tables.ts (the four row key formats, every cell
 * type) with the JSON scan's row count, row keys, entity id components, values (the newest
 * version; with versions=all every version, {timestamp, value} lists newest first) and nulls for
 * absent cells, in the column types docs/interface.md promises. One Python process reads the
 * eight streams. Skips when the engines are missing, fails then in CI (engines.ts).
 */
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { getBytes, raw } from '../http/harness.js';
import { engineGateway, ROWS, rowsPath, TABLES, type EngineTable } from './engine-tables.js';
import { engineTest, readBack } from './engines.js';
import { checkAgainstJson } from './expected.js';

const ARROW = { accept: 'application/vnd.apache.arrow.stream' };

engineTest(t, 'pyarrow and DuckDB read each key format table from the Arrow stream with the JSON scan values', async (t) => {
  const h = await engineGateway();
  t.teardown(() => h.close());
  const dir = mkdtempSync(join(tmpdir(), 'rowgate-engines-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const files: { table: EngineTable; versions: boolean; file: string; json: string }[] = [];
  for (const table of TABLES)
    for (const versions of [false, true]) {
      const query = `${rowsPath(table.name)}?limit=-1${versions ? '&versions=all' : ''}`;
      const json = await raw(h.base, 'GET', query);
      t.equal(json.status, 200);
      const arrow = await getBytes(h.base, query, ARROW);
      t.equal(arrow.status, 200, `${query}: the Arrow stream is served`);
      t.equal(arrow.trailers['x-rowgate-rows'], String(ROWS), `${query}: the stream is complete`);
      const file = join(dir, `${table.name}${versions ? '.all' : ''}.arrows`);
      writeFileSync(file, arrow.body);
      files.push({ table, versions, file, json: json.body });
    }
  const reads = readBack(
    'arrow',
    files.map((f) => f.file),
  );
  t.equal(reads.length, files.length * 2, 'each stream read by both engines');
  for (const { table, versions, file, json } of files) {
    const layout = await h.store.getLayout('default', table.name);
    for (const read of reads.filter((r) => r.file === file)) {
      const what = `${table.name} (${table.encoding} keys)${versions ? ' versions=all' : ''}, ${read.engine}`;
      checkAgainstJson(t, what, layout, read, json, ROWS, versions);
    }
  }
});
