/**
 * Facts the docs state that were false (#29 item 20): the curl --raw example shows the last chunk's
 * 0 line (four lines: 0, two trailers, the blank line ending them), the command line is advertised
 * as tools/rowgate (npx rowgate took 60 s the first time), and export --help names its formats.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT, runCli, ensureBuilt } from './helpers.js';

const read = (name: string): string => readFileSync(join(ROOT, name), 'utf8');

t.before(ensureBuilt);

t.test('the trailers example tails enough lines to show the 0 it names', async (t) => {
  const page = read('docs/interface.md');
  const m = /\| tail -(\d+)\n((?:# .*\n)+)/.exec(page);
  t.ok(m, 'the example is there');
  // Its comment lines are what tail prints, the blank line that ends the trailers included.
  t.equal(Number(m![1]), m![2]!.trimEnd().split('\n').length + 1, 'tail -N: the lines shown plus the blank one');
  t.match(m![2]!, /^# 0\n/);
});

t.test('no page advertises npx rowgate', async (t) => {
  for (const name of ['README.md', 'docs/cli.md', 'docs/getting-started.md']) t.notMatch(read(name), /also `npx rowgate`/, name);
});

t.test('export --help names its formats, not only the CR LF stream', async (t) => {
  const help = await runCli(['--help']);
  t.match(help.stdout.replace(/\s+/g, ' '), / export \[options\] write rows as json [^]*?ndjson\b[^]*? avro\b[^]*? parquet\b/);
});
