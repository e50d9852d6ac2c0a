/**
 * Starts the Cloud Bigtable emulator (`cbtemulator`) for a test file on 127.0.0.1 with a port the
 * system picks, and stops it when the file's tests end. The binary is looked up on PATH, under
 * $CLOUDSDK_ROOT_DIR or the usual SDK roots, then under `gcloud info`'s SDK root. When it is
 * absent, `startEmulator` returns undefined and says what is missing, so the file can skip.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const EMULATOR_MISSING =
  'cbtemulator (the Cloud Bigtable emulator) was not found on PATH or under <google-cloud-sdk>/platform/bigtable-emulator/: install it with `gcloud components install bigtable` (or the google-cloud-cli-bigtable-emulator package)';

export function findEmulator(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'cbtemulator'))) return join(dir, 'cbtemulator');
  }
  const roots = [process.env.CLOUDSDK_ROOT_DIR, '/usr/lib/google-cloud-sdk', '/usr/share/google-cloud-sdk', '/opt/google-cloud-sdk', '/google-cloud-sdk'];
  for (const root of roots) {
    const path = root && join(root, 'platform', 'bigtable-emulator', 'cbtemulator');
    if (path && existsSync(path)) return path;
  }
  const gcloud = spawnSync('gcloud', ['info', '--format=value(installation.sdk_root)'], { encoding: 'utf8', timeout: 15_000 });
  const root = gcloud.status === 0 ? gcloud.stdout.trim() : '';
  const path = root && join(root, 'platform', 'bigtable-emulator', 'cbtemulator');
  return path && existsSync(path) ? path : undefined;
}

export interface Emulator {
  /** host:port, for BIGTABLE_EMULATOR_HOST. */
  readonly host: string;
  /** The environment a client (or a spawned gateway) needs to reach it and nothing else. */
  readonly env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts the emulator and points this process's Bigtable clients at it; undefined when absent. */
export async function startEmulator(): Promise<Emulator | undefined> {
  const binary = findEmulator();
  if (!binary) return undefined;
  const child: ChildProcess = spawn(binary, ['-host', '127.0.0.1', '-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const host = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`cbtemulator did not start in 30 s: ${output}`)), 30_000);
    const onData = (b: Buffer): void => {
      output += b.toString();
      const m = /running on (127\.0\.0\.1:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`cbtemulator exited (${code}): ${output}`));
    });
  });
  child.removeAllListeners('exit');
  child.stdout!.resume();
  child.stderr!.resume();
  const env = { BIGTABLE_EMULATOR_HOST: host, METADATA_SERVER_DETECTION: 'none', GCE_METADATA_HOST: '127.0.0.1:9' };
  Object.assign(process.env, env);
  return {
    host,
    env,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
