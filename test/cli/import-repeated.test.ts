/**
 * An import whose lines revisit rows: the parsing thread merges the lines of one row in a part
 * into one compact row (BatchPacker.finish) before the store writes it. The table must be what
 * writing the lines one after another makes: a later line's version replaces an earlier one's of
 * the same timestamp, and max_versions (5 in the users layout) keeps the newest.
 */
import t from 'tap';
import { ensureBuilt, runCli, writeFile } from './helpers.js';
import { freshTable } from './import-fixtures.js';

t.before(ensureBuilt);

const KEYS = 40;

/**
 * 1,200 lines over KEYS rows, line i on row i % KEYS: info:name at one of 3 timestamps (so later
 * lines replace earlier versions), info:age at a timestamp of its own (more versions than kept), a
 * counter set at one of 2 timestamps, and a plain line's shape or the general parser's (a record).
 */
function lines(): string[] {
  const out: string[] = [];
  for (let i = 0; i < 1200; i++) {
    const uid = i % KEYS;
    const info: Record<string, unknown> = {
      name: [{ timestamp: 1000 + (i % 3), value: `name ${i}` }],
      age: [{ timestamp: 5000 + i, value: i }],
    };
    if (i % 4 === 0) info.address = [{ timestamp: 2000 + (i % 5), value: { street: `s${i}`, city: 'c', zip: null } }];
    out.push(JSON.stringify({ entityId: [uid], cells: { info, logins: { web: [{ timestamp: 7000 + (i % 2), value: i }] } } }));
  }
  return out;
}

async function exported(flags: string[]): Promise<string> {
  const r = await runCli(['export', ...flags]);
  if (r.code !== 0) throw new Error(r.stderr);
  return r.stdout;
}

t.test('lines revisiting rows make the same table merged in one part as written one batch at a time', async (t) => {
  const text = `${lines().join('\n')}\n`;
  // Reference: batches of KEYS lines never hold a row twice, so each line is its own write.
  const { dir: refDir, flags: refFlags } = await freshTable(t);
  const ref = await runCli(['import', ...refFlags, '--batch', String(KEYS), '--threads', '1', writeFile(refDir, 'rows.ndjson', text)]);
  t.equal(ref.code, 0, ref.stderr);
  const expected = await exported(refFlags);
  t.equal(expected.split('\r\n').length - 1, KEYS, 'every row');
  t.match(expected, /"age":\[(\{[^}]*\},){4}\{[^}]*\}\]/, 'max_versions kept 5 versions of info:age');

  for (const extra of [[], ['--batch', '300', '--threads', '2']]) {
    const { dir, flags } = await freshTable(t);
    const r = await runCli(['import', ...flags, ...extra, writeFile(dir, 'rows.ndjson', text)]);
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /^imported 1200 rows, 3900 cells in /, 'the summary counts lines, not merged rows');
    t.equal(await exported(flags), expected, `the same table (${extra.join(' ') || 'one batch'})`);
  }
});
