/**
 * The Cloud Bigtable emulator (cbtemulator) for the benchmark and the tests: found on PATH or under
 * the Google Cloud SDK, started on 127.0.0.1 with a port the system picks, and killed when stopped
 * and also when the process exits any other way (an exit handler; SIGINT and SIGTERM handlers while
 * it runs), so a failed or interrupted run leaves no emulator behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The emulator binary: on PATH, under $CLOUDSDK_ROOT_DIR or the usual SDK roots, or under `gcloud info`'s root. */
export function findCbtemulator(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'cbtemulator'))) return join(dir, 'cbtemulator');
  }
  for (const root of [
    process.env.CLOUDSDK_ROOT_DIR,
    '/usr/lib/google-cloud-sdk',
    '/usr/share/google-cloud-sdk',
    '/opt/google-cloud-sdk',
    '/google-cloud-sdk',
  ]) {
    const path = root && join(root, 'platform', 'bigtable-emulator', 'cbtemulator');
    if (path && existsSync(path)) return path;
  }
  const gcloud = spawnSync('gcloud', ['info', '--format=value(installation.sdk_root)'], { encoding: 'utf8', timeout: 15_000 });
  const root = gcloud.status === 0 ? gcloud.stdout.trim() : '';
  const path = root && join(root, 'platform', 'bigtable-emulator', 'cbtemulator');
  return path && existsSync(path) ? path : undefined;
}

export interface RunningEmulator {
  readonly pid: number;
  /** host:port, for BIGTABLE_EMULATOR_HOST. */
  readonly host: string;
  /** What a Bigtable client needs to reach the emulator (and no metadata server). */
  readonly env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts cbtemulator on 127.0.0.1 with a port the system picks; waits at most 30 s for it. */
export async function startCbtemulator(binary: string): Promise<RunningEmulator> {
  const child: ChildProcess = spawn(binary, ['-host', '127.0.0.1', '-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  // A benchmark stopped by a signal runs no 'exit' handlers: kill the emulator, then exit as the signal would.
  const onSignal = (signal: NodeJS.Signals): void => {
    child.kill('SIGKILL');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('exit', killOnExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stop = (): Promise<void> =>
    new Promise<void>((resolve) => {
      process.removeListener('exit', killOnExit);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  try {
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
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`cbtemulator exited (${code}): ${output}`));
      });
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    child.removeAllListeners('exit');
    child.stdout!.resume();
    child.stderr!.resume();
    return { pid: child.pid!, host, env: { BIGTABLE_EMULATOR_HOST: host, METADATA_SERVER_DETECTION: 'none', GCE_METADATA_HOST: '127.0.0.1:9' }, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
