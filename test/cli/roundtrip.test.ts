/**
 * import then export round-trips a generated table of 100,000 rows byte for byte. The input is
 * written in the export's canonical form: CR LF after every row, rows in row-key order, families
 * and qualifiers sorted, versions newest first, explicit timestamps and writer_schema ids.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { demoRow } from '../../lib/demo/demo-data.js';
import { USERS_LAYOUT_JSON } from '../../lib/model/layout/demo-layouts.js';
import { entityIdFromBody, resolveEntityId } from '../../lib/model/keys/entity-id.js';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { JsonValue } from '../../lib/model/types.js';
import { ensureBuilt, runCli, tempDir, writeFile } from './helpers.js';

const ROWS = 100_000;

t.before(ensureBuilt);

/** The first line where two row streams differ, for a readable failure. */
function firstDifference(a: string, b: string): string {
  const la = a.split('\r\n');
  const lb = b.split('\r\n');
  for (let i = 0; i < Math.max(la.length, lb.length); i++) {
    if (la[i] !== lb[i]) return `row ${i + 1}:\n  input:  ${la[i]?.slice(0, 400)}\n  output: ${lb[i]?.slice(0, 400)}`;
  }
  return 'no difference';
}

t.test(`import then export of ${ROWS} rows is byte for byte the input`, async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'data');
  const store = ['--data', data];
  const layoutFile = writeFile(dir, 'users.json', USERS_LAYOUT_JSON);
  const primerLayout = writeFile(dir, 'primer.json', USERS_LAYOUT_JSON.replace('name: "users"', 'name: "primer"'));

  const created = await runCli(['create-table', ...store, '--instance', 'rt', '--layout', layoutFile]);
  t.equal(created.code, 0, created.stderr);
  t.equal(created.stdout, 'created instance rt\ncreated table users in instance rt (key format FORMATTED; families info, logins)\n');
  t.equal((await runCli(['create-table', ...store, '--instance', 'rt', '--layout', primerLayout])).code, 0);

  // The ids of the record and array schemas are handed out on first use: write one cell of each
  // (without writer_schema, so the layout schema is used) and read the ids back from an export.
  const primer = '{"entityId":[1],"cells":{"info":{"address":[{"value":{"street":"s","city":"c","zip":null}}],"tags":[{"value":[]}]}}}\n';
  const primed = await runCli(['import', ...store, '--instance', 'rt', '--table', 'primer', '-'], { input: primer });
  t.equal(primed.code, 0, primed.stderr);
  const primerRow = JSON.parse((await runCli(['export', ...store, '--instance', 'rt', '--table', 'primer'])).stdout) as {
    cells: { info: { address: [{ writer_schema: number }]; tags: [{ writer_schema: number }] } };
  };
  const writerSchemas = { address: primerRow.cells.info.address[0].writer_schema, tags: primerRow.cells.info.tags[0].writer_schema };
  t.same(writerSchemas, { address: 8, tags: 9 }, 'first user schemas get ids 8 and 9');

  const layout = parseLayout(USERS_LAYOUT_JSON);
  const generated: { key: Buffer; text: string }[] = [];
  let cells = 0;
  for (let uid = 1; uid <= ROWS; uid++) {
    const row = demoRow(uid, { seed: 7, writerSchemas }) as { entityId: JsonValue; cells: Record<string, Record<string, unknown[]>> };
    for (const family of Object.values(row.cells)) for (const versions of Object.values(family)) cells += versions.length;
    generated.push({ key: resolveEntityId(layout.keyFormat, entityIdFromBody(row.entityId)), text: JSON.stringify(row) });
  }
  generated.sort((a, b) => Buffer.compare(a.key, b.key));
  const input = generated.map((r) => `${r.text}\r\n`).join('');
  const inputFile = writeFile(dir, 'rows.ndjson', input);

  const imported = await runCli(['import', ...store, '--instance', 'rt', '--table', 'users', inputFile]);
  t.equal(imported.code, 0, imported.stderr);
  const summary = /^imported (\d+) rows, (\d+) cells in (\d+\.\d\d) s \(\d+ rows\/s, (\d+) cells\/s\)\n$/.exec(imported.stdout);
  t.ok(summary, `summary line: ${imported.stdout}`);
  t.equal(Number(summary?.[1]), ROWS);
  t.equal(Number(summary?.[2]), cells);
  t.comment(imported.stdout.trim());

  // .json: the row stream (CR LF) as imported; a .ndjson name would ask for LF (docs/cli.md, Formats).
  const outFile = join(dir, 'export.json');
  const exported = await runCli(['export', ...store, '--instance', 'rt', '--table', 'users', '--out', outFile]);
  t.equal(exported.code, 0, exported.stderr);
  t.equal(exported.stdout, '', 'nothing on stdout with --out');
  t.match(
    exported.stderr,
    new RegExp(`^exported ${ROWS} rows, ${cells} cells in \\d+\\.\\d\\d s \\(\\d+ rows/s\\); wrote ${Buffer.byteLength(input)} bytes\\n$`),
  );
  t.comment(exported.stderr.trim());
  const output = readFileSync(outFile);
  const same = output.equals(Buffer.from(input, 'utf8'));
  t.ok(same, 'export output equals the imported bytes');
  if (!same) t.comment(firstDifference(input, output.toString('utf8')));

  // The same stream on stdout, from a start entity id, limited.
  const from = generated[500]!;
  const startEid = JSON.stringify((JSON.parse(from.text) as { entityId: unknown }).entityId);
  const part = await runCli(['export', ...store, '--instance', 'rt', '--table', 'users', '--start-eid', startEid, '--limit', '2000']);
  t.equal(part.code, 0, part.stderr);
  t.equal(
    part.stdout,
    generated
      .slice(500, 2500)
      .map((r) => `${r.text}\r\n`)
      .join(''),
    'rows 500..2499 on stdout',
  );

  const reexported = await runCli(['export', ...store, '--instance', 'rt', '--table', 'users', '--cols', 'info:email', '--limit', '3']);
  const emails = generated.slice(0, 3).map((r) => {
    const row = JSON.parse(r.text) as { entityId: unknown; cells: { info: { email: unknown } } };
    return `${JSON.stringify({ entityId: row.entityId, cells: { info: { email: row.cells.info.email } } })}\r\n`;
  });
  t.equal(reexported.stdout, emails.join(''), '--cols selects one column, in the same format');
});
