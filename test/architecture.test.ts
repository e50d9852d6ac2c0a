/**
 * Where rules live (issue #17): what differs between the interface's revisions is decided in
 * lib/rows/dialect.ts only; everything else asks the dialect (a revision compared anywhere else
 * is a rule with a second home). And no module imports itself through others: an import cycle
 * works only in the order its entry points happen to load it (routes.ts and openapi.ts once
 * needed routes.ts loaded first, or "Cannot access 'getOpenApi' before initialization").
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { REPO_ROOT, repoPath } from './support/repo-root.js';

const LIB = repoPath('lib');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

t.test('revision checks (revision === / !== / < / >) appear only in lib/rows/dialect.ts', async (t) => {
  const found: string[] = [];
  for (const file of sources(LIB)) {
    const rel = relative(LIB, file);
    if (rel === join('rows', 'dialect.ts')) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/\brevision\s*(?:[!=]==|[<>]=?)\s*\d/.test(line)) found.push(`lib/${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  t.same(found, [], 'every revision difference is a dialect property');
});

/** A module's static imports of the project's own .ts files, apart: those loaded at run time, and those for types only (erased); and the packages it loads at run time. */
interface Imports {
  readonly value: string[];
  readonly typeOnly: string[];
  readonly packages: string[];
}

const ROOT = REPO_ROOT;

/** Whether an import declaration is erased at compile time (`import type`, or only `type` names). */
function isTypeOnlyImport(statement: ts.ImportDeclaration): boolean {
  const clause = statement.importClause;
  const named = clause?.namedBindings;
  return (
    clause !== undefined &&
    (clause.isTypeOnly ||
      (clause.name === undefined && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)))
  );
}

/** The import graph of every .ts file under `dirs` (of the repository), as paths relative to it. */
function importGraph(dirs: readonly string[]): Map<string, Imports> {
  const graph = new Map<string, Imports>();
  for (const file of dirs.flatMap((dir) => sources(join(ROOT, dir)))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
    const imports: Imports = { value: [], typeOnly: [], packages: [] };
    for (const statement of source.statements) {
      let specifier: ts.Expression | undefined;
      let typeOnly = false;
      if (ts.isImportDeclaration(statement)) {
        specifier = statement.moduleSpecifier;
        typeOnly = isTypeOnlyImport(statement);
      } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined) {
        specifier = statement.moduleSpecifier;
        typeOnly = statement.isTypeOnly;
      }
      if (specifier === undefined || !ts.isStringLiteral(specifier)) continue;
      if (!specifier.text.startsWith('.')) {
        if (!typeOnly) imports.packages.push(specifier.text);
        continue;
      }
      const target = join(dirname(file), specifier.text.replace(/\.js$/, '.ts'));
      if (!existsSync(target)) continue;
      (typeOnly ? imports.typeOnly : imports.value).push(relative(ROOT, target));
    }
    graph.set(relative(ROOT, file), imports);
  }
  return graph;
}

/** Every cycle of the graph, one per strongly connected component (Tarjan), as a path `a -> b -> ... -> a`. */
function cycles(edges: ReadonlyMap<string, readonly string[]>): string[] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: Set<string>[] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = new Set<string>();
    let w: string;
    do {
      w = stack.pop()!;
      component.add(w);
    } while (w !== v);
    if (component.size > 1 || (edges.get(v) ?? []).includes(v)) components.push(component);
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  // One cycle through each component, from its first module: the shortest way back to it (breadth first).
  return components.map((component) => {
    const start = [...component].sort()[0]!;
    const from = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of edges.get(v) ?? []) {
        if (!component.has(w) || from.has(w)) continue;
        from.set(w, v);
        if (w === start) queue.length = 0;
        else queue.push(w);
      }
    }
    const path: string[] = [];
    for (let v = from.get(start)!; v !== start; v = from.get(v)!) path.unshift(v);
    return [start, ...path, start].join(' -> ');
  });
}

const graph = importGraph(['lib', 'tools', 'bench']);

t.test("apache-arrow's runtime is loaded only through lib/deps/arrow.ts (lib, tools, bench: types may come from the package)", async (t) => {
  const found: string[] = [];
  for (const file of ['lib', 'tools', 'bench'].flatMap((dir) => sources(join(ROOT, dir)))) {
    const rel = relative(ROOT, file);
    if (rel === join('lib', 'deps', 'arrow.ts')) continue;
    const text = readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false);
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
      if (/^apache-arrow(\/|$)/.test(statement.moduleSpecifier.text) && !isTypeOnlyImport(statement)) found.push(`${rel}: ${statement.getText(source)}`);
    }
    if (/import\(\s*['"]apache-arrow/.test(text)) found.push(`${rel}: a dynamic import of apache-arrow`);
  }
  t.same(found, [], "a second copy of apache-arrow would hand batches that are not instanceof the door's classes");
});

t.test('no import cycle in lib, tools or bench (no module needs itself loaded first: issue #17)', async (t) => {
  t.ok(graph.size > 100, `the walk found the modules (${graph.size})`);
  t.same(cycles(new Map([...graph].map(([file, imports]) => [file, imports.value]))), [], 'no cycle of imports loaded at run time');
  // Types are erased, but a cycle through them is still two modules that each need the other.
  const typed = cycles(new Map([...graph].map(([file, imports]) => [file, [...imports.value, ...imports.typeOnly]])));
  t.same(typed, [], 'no cycle through type-only imports either');
});

/** The packages `from` loads at run time through its static imports, each with the chain of modules that leads to it. */
function packagesReached(from: string): Map<string, string> {
  const reached = new Map<string, string>();
  const seen = new Set<string>();
  const walk = (file: string, chain: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const imports = graph.get(file);
    if (imports === undefined) return;
    for (const p of imports.packages) if (!reached.has(p)) reached.set(p, chain);
    for (const next of imports.value) walk(next, `${chain} -> ${next}`);
  };
  walk(from, from);
  return reached;
}

t.test('a Parquet export starts its scan before it loads parquet-wasm: no static import reaches the writer', async (t) => {
  const exportParquet = join('tools', 'support', 'export-parquet.ts');
  t.ok(packagesReached(exportParquet).has('node:stream'), 'the walk sees its packages');
  t.equal(packagesReached(exportParquet).get('parquet-wasm'), undefined, 'export-parquet.ts');
  t.equal(packagesReached(join('lib', 'rows', 'stages', 'parquet-spec.ts')).get('parquet-wasm'), undefined, 'the spec its scan asks with');
  t.ok(packagesReached(join('lib', 'rows', 'stages', 'parquet-arrow.ts')).has('parquet-wasm'), 'the writer it imports once the scan runs does');
});

t.test("export's flags are checked before the export's modules load: its command module loads no store, format or HTTP client", async (t) => {
  const reached = packagesReached(join('tools', 'commands', 'export.ts'));
  t.ok(reached.has('commander'), 'the walk sees its packages');
  for (const heavy of ['lmdb', 'avsc', 'json5', 'apache-arrow', 'parquet-wasm', 'node:https']) t.equal(reached.get(heavy), undefined, heavy);
});

t.test('the cycle finder finds cycles', async (t) => {
  t.same(
    cycles(
      new Map([
        ['a', ['b']],
        ['b', ['c', 'd']],
        ['c', ['a']],
        ['d', []],
        ['e', ['e']],
      ]),
    ),
    ['a -> b -> c -> a', 'e -> e'],
  );
  t.same(
    cycles(
      new Map([
        ['a', ['b']],
        ['b', []],
      ]),
    ),
    [],
  );
});

// The test layers (issue #31): a test needing a socket, a child process or the emulator lives in an
// integration folder; every other test is a unit test, run by `npm run test:unit` under
// test/support/unit-guard.ts, which makes a socket or a process throw.
const INTEGRATION_FOLDERS = ['http', 'cli', 'bigtable', 'engines'];
const SOCKET_OR_PROCESS = /^(node:)?(child_process|cluster|dgram|http|http2|https|net|tls)$/;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? testFiles(path) : name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The modules a file imports by name (node:..., packages), not relative ones. */
function namedImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
  return source.statements
    .filter((s): s is ts.ImportDeclaration => ts.isImportDeclaration(s) && ts.isStringLiteral(s.moduleSpecifier))
    .map((s) => (s.moduleSpecifier as ts.StringLiteral).text)
    .filter((m) => !m.startsWith('.'));
}

t.test('test:unit runs every test outside the integration folders, under the guard, and none of them imports a socket or process module', async (t) => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const unit = scripts['test:unit'] ?? '';
  t.match(unit, `'dist/test/!(${INTEGRATION_FOLDERS.join('|')})/**/*.test.js' 'dist/test/*.test.js'`, 'the folder rule, as this test states it');
  t.match(unit, '--node-arg=--import=./dist/test/support/unit-guard.js', 'the guard is loaded first');
  const unitTests = testFiles(join(ROOT, 'test')).filter((f) => !INTEGRATION_FOLDERS.includes(relative(join(ROOT, 'test'), f).split(sep)[0]!));
  t.ok(unitTests.length > 30, `${unitTests.length} unit tests`);
  for (const file of unitTests) {
    const bad = namedImports(file).filter((m) => SOCKET_OR_PROCESS.test(m));
    t.same(
      bad,
      [],
      `${relative(ROOT, file)} imports no socket or process module (or moves to test/${INTEGRATION_FOLDERS[0]}/ or test/${INTEGRATION_FOLDERS[1]}/)`,
    );
  }
  t.ok(
    SOCKET_OR_PROCESS.test('node:child_process') && SOCKET_OR_PROCESS.test('http') && !SOCKET_OR_PROCESS.test('node:fs'),
    'the check tells a process module from a file one',
  );
});
