/**
 * Whether the engine read-back checks run: they need Python's pyarrow and duckdb packages (the
 * engines users load exports into). Without them a check skips, saying what is missing; with
 * ROWGATE_REQUIRE_ENGINES=1 (.ci/run sets it, after installing both) it fails instead, so CI
 * never passes by skipping. The one place that decision is made; readBack runs
 * test/engines/read_back.py once for a list of files (one Python start, ~0.5 s, not one a file).
 */
import { spawnSync } from 'node:child_process';
import type { Test } from 'tap';
import { repoPath } from '../support/repo-root.js';

/** The interpreter pip installs into (`python3 -m pip install pyarrow duckdb`): the first python3 on PATH. */
const PYTHON = 'python3';

let missing: string | undefined | null = null;

/** Why the engines cannot run here, or undefined when `import pyarrow, duckdb` works. */
export function enginesMissing(): string | undefined {
  if (missing === null) {
    const r = spawnSync(PYTHON, ['-c', 'import pyarrow, duckdb'], { encoding: 'utf8' });
    missing =
      r.status === 0
        ? undefined
        : `pyarrow and duckdb (Python) are not importable by ${PYTHON} (${(r.error?.message ?? r.stderr.trim().split('\n').pop() ?? '').trim()}): python3 -m pip install pyarrow duckdb`;
  }
  return missing;
}

/**
 * A subtest that needs the engines: run when they are there; skipped with the reason when they
 * are not; failed with the reason when ROWGATE_REQUIRE_ENGINES=1.
 */
export function engineTest(t: Test, name: string, fn: (t: Test) => Promise<void>): void {
  const why = enginesMissing();
  if (why === undefined) t.test(name, fn);
  else if (process.env.ROWGATE_REQUIRE_ENGINES === '1') t.test(name, async (t) => void t.fail(`${why} (ROWGATE_REQUIRE_ENGINES=1: this run requires them)`));
  else t.test(name, { skip: why }, fn);
}

/** What an engine read from one file: its columns (name, the engine's type) and rows. */
export interface EngineRead {
  readonly engine: 'pyarrow' | 'duckdb';
  readonly file: string;
  readonly columns: [string, string][];
  readonly rows: Record<string, unknown>[];
}

/** Every file read by pyarrow and by DuckDB (read_back.py), in one Python process. */
export function readBack(kind: 'arrow' | 'parquet', files: readonly string[]): EngineRead[] {
  const r = spawnSync(PYTHON, [repoPath('test', 'engines', 'read_back.py'), kind, ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`read_back.py ${kind} failed (${r.status ?? r.error?.message}):\n${r.stderr}`);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as EngineRead);
}
