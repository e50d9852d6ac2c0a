/**
 * The repository's root folder, for tests that read files of the repository (fixtures, docs, the
 * sources the architecture checks walk). The tests run compiled from dist/test/ (one build for
 * the tests and the CLI processes they start, issue #31), where a path relative to the test file's
 * own URL is not the source tree's, so the root is found by walking up to the folder that holds
 * package.json (dist/ holds none).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

/** The repository's root folder (absolute). */
export const REPO_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** An absolute path inside the repository, from its root: repoPath('test', 'fixtures', 'x.json'). */
export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}
