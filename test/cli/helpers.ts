/**
 * Helpers of the command-line tests: they run the built CLI (`node tools/rowgate ...`) as a user
 * would. The CLI and the tests both run from dist/ (one build; tap loads no TypeScript). `npm test`
 * builds dist/ first (the `pretest` script), so under it a dist/ older than a source file in lib/
 * or tools/ (a source changed during the run) fails the test instead of being rebuilt. Run any
 * other way (`npx tap dist/test/cli/serve.test.js` after editing a source), a missing or stale
 * dist/ is rebuilt once (`npm run build`, under a lock so parallel test files build once), saying
 * so on stderr; the test file itself is then the one compiled before, so build first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT } from '../support/repo-root.js';

export const ROOT = REPO_ROOT;
export const CLI = join(ROOT, 'tools', 'rowgate');
/** What tools/rowgate runs: the bundle of dist/tools/rowgate-cli.js (tools/bundle.ts). */
const BUILT_CLI = join(ROOT, 'dist', 'bundle', 'rowgate-cli.js');
/** Written by the build's last step (test/support/dist-tests.mjs): when dist/ was last built. */
const BUILT_STAMP = join(ROOT, 'dist', '.built');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function isBuilt(): boolean {
  let built: number;
  try {
    statSync(BUILT_CLI);
    built = statSync(BUILT_STAMP).mtimeMs;
  } catch {
    return false;
  }
  return built >= Math.max(newestSource(join(ROOT, 'lib')), newestSource(join(ROOT, 'tools')));
}

/** True under `npm test` (npm's lifecycle event, inherited by tap's test processes): its `pretest` built dist/. */
const BUILT_BY_NPM_TEST = process.env.npm_lifecycle_event === 'test';

/**
 * Makes sure the CLI processes run the code under test. Under `npm test` a stale dist/ throws; run
 * otherwise, dist/ is built when it is missing or stale, parallel callers waiting for one build.
 */
export async function ensureBuilt(): Promise<void> {
  if (isBuilt()) return;
  if (BUILT_BY_NPM_TEST) {
    throw new Error(
      `${BUILT_CLI} is missing or older than a source file in lib/ or tools/, although npm test built dist/ first (pretest): ` +
        'a source changed during the run, so the CLI would run other code than the tests load. Run npm test again.',
    );
  }
  const lock = join(tmpdir(), `rowgate-build-${createHash('sha1').update(ROOT).digest('hex').slice(0, 12)}.lock`);
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (isBuilt()) return;
      // A lock left by a killed build expires after 3 minutes.
      if (waited > 180_000) rmSync(lock, { recursive: true, force: true });
      await sleep(200);
    }
  }
  try {
    if (isBuilt()) return;
    process.stderr.write('# dist/ is missing or older than lib/ or tools/: building it (npm run build) so the CLI runs the code under test\n');
    const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}\n${r.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to completion; `input` is written to its stdin. */
export function runCli(args: readonly string[], options: { input?: string | Buffer; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolvePromise({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** Starts the CLI without waiting for it (serve); `env` is added to this process's environment. */
export function startCli(args: readonly string[], options: { env?: Record<string, string>; cwd?: string } = {}): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
}

/** A running `rowgate serve`, started by serveCli. */
export interface ServedCli {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** The admin listener's port, when serve printed one. */
  readonly adminPort: number | undefined;
  stdout(): string;
  stderr(): string;
  /** Waits until `pattern` occurs `count` times in stderr (5 s at most). */
  waitLog(pattern: RegExp, count?: number): Promise<void>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `rowgate serve ARGS` and resolves once it printed its `listening on` line and the admin
 * listener's line after it (`admin: false`: a configuration without the admin listener, the first
 * line only); rejects with its stderr when it exits first. Killed when the test ends.
 */
export async function serveCli(
  t: { teardown(fn: () => void): void },
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; admin?: boolean } = {},
): Promise<ServedCli> {
  const child = startCli(['serve', ...args], options);
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  // serve prints its admin line right after the first unless the admin listener is off (admin: false).
  const listening =
    options.admin === false ? /^listening on http:\/\/[^\n]+:(\d+)\n/ : /^listening on http:\/\/[^\n]+:(\d+)\nadmin listening on http:\/\/[^\n]+:(\d+)\n/;
  const [port, adminPort] = await new Promise<[number, number | undefined]>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => {
      stdout += b.toString();
      const m = listening.exec(stdout);
      if (m) resolve([Number(m[1]), m[2] === undefined ? undefined : Number(m[2])]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before listening:\n${stderr}`)));
  });
  return {
    child,
    pid: child.pid!,
    port,
    adminPort,
    stdout: () => stdout,
    stderr: () => stderr,
    waitLog: async (pattern, count = 1) => {
      const global = new RegExp(pattern.source, 'g');
      for (let i = 0; i < 200; i++) {
        if ((stderr.match(global) ?? []).length >= count) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no ${count} x ${pattern} in the log within 5 s:\n${stderr}`);
    },
    stop: async () => {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A fresh temporary directory, removed when the test ends. */
export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'rowgate-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes `text` to `name` in `dir`; returns the path. */
export function writeFile(dir: string, name: string, text: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
