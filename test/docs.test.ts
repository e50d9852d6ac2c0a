/**
 * The docs stay navigable: README.md is short and links every page of docs/, and every relative
 * link in README.md and docs/*.md names a file of the repository (and, with a #fragment, a heading
 * of that file).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import t from 'tap';

const README = 'README.md';
const MAX_README_LINES = 250;

const docsPages = readdirSync('docs')
  .filter((name) => name.endsWith('.md'))
  .map((name) => join('docs', name));

/** The text outside fenced code blocks, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** Every markdown link target of a page: `[text](target)` and `[text](target "title")`. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a markdown page's headings give (a repeated heading gets -1, -2, ...). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

t.test(`README.md has at most ${MAX_README_LINES} lines`, async (t) => {
  const lines = readFileSync(README, 'utf8').replace(/\n$/, '').split('\n').length;
  t.ok(lines <= MAX_README_LINES, `README.md has ${lines} lines`);
});

t.test('README.md links every page of docs/', async (t) => {
  const linked = new Set(
    linkTargets(readFileSync(README, 'utf8'))
      .map((target) => target.split('#')[0]!)
      .map((path) => normalize(path)),
  );
  t.ok(docsPages.length > 0, 'docs/ has pages');
  for (const page of docsPages) t.ok(linked.has(normalize(page)), `README.md links ${page}`);
});

t.test('every relative link of README.md and docs/*.md names an existing file and heading', async (t) => {
  for (const page of [README, ...docsPages]) {
    for (const target of linkTargets(readFileSync(page, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...: not a file of the repository
      const [path = '', fragment] = target.split('#');
      const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
      if (!existsSync(file)) {
        t.fail(`${page}: the link ${target} names ${file}, which does not exist`);
        continue;
      }
      if (fragment === undefined || fragment === '') continue;
      if (!file.endsWith('.md') || statSync(file).isDirectory()) {
        t.fail(`${page}: the link ${target} has a #fragment into a file that is not markdown`);
        continue;
      }
      t.ok(anchorsOf(readFileSync(file, 'utf8')).has(fragment), `${page}: ${target} names a heading of ${file}`);
    }
  }
});

t.test('the anchors are made as GitHub makes them', async (t) => {
  t.equal(slug("Compatibility with KijiREST's clients"), 'compatibility-with-kijirests-clients');
  t.equal(slug('Reload (SIGHUP)'), 'reload-sighup');
  t.equal(slug('From a gateway: `--url`'), 'from-a-gateway---url');
  t.same([...anchorsOf('# A\n\n```\n# not a heading\n```\n## A\n')], ['a', 'a-1']);
});
