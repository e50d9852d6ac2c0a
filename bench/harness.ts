/** Process, HTTP and measurement helpers of the benchmark (loopback only, every loop bounded). */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { get, request } from 'node:http';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

/** A row of the results table run.ts prints and bench/README.md keeps: a figure, against a baseline of the same run. */
export interface BenchRow {
  scenario: string;
  figure: string;
  value: number;
  unit: string;
  baseline?: number;
  ratio?: number;
  target?: string;
  met?: boolean;
}

export interface Spawned {
  readonly proc: ChildProcess;
  readonly port: number;
}

/**
 * Starts a server process and waits (at most 60 s) for the line that names its port. With
 * `logFile`, its stderr (the gateway's request log) goes to that file, as a deployment would send
 * it to a file or journal, instead of through a pipe this process reads.
 */
export function startServer(command: string, args: readonly string[], portLine: RegExp, logFile?: string): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const logFd = logFile === undefined ? undefined : openSync(logFile, 'a');
    const proc = spawn(command, args, { stdio: ['ignore', 'pipe', logFd ?? 'pipe'] });
    if (logFd !== undefined) closeSync(logFd);
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not start in 60 s\n${out}\n${err}`));
    }, 60_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = portLine.exec(out);
      if (m) {
        clearTimeout(timer);
        proc.stdout!.removeAllListeners('data');
        proc.stdout!.resume();
        resolve({ proc, port: Number(m[1]) });
      }
    });
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.length > 100_000) err = err.slice(-50_000);
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      const log = logFile === undefined ? '' : readFileSync(logFile, 'utf8').slice(-4000);
      reject(new Error(`${command} ${args.join(' ')} exited ${code}\n${out}\n${err}${log}`));
    });
  });
}

/** Stops a server started by startServer (SIGTERM, then SIGKILL after 5 s). */
export async function stopServer(s: Spawned): Promise<void> {
  if (s.proc.exitCode !== null) return;
  s.proc.removeAllListeners('exit');
  const exited = new Promise((r) => s.proc.once('exit', r));
  s.proc.kill('SIGTERM');
  const timer = setTimeout(() => s.proc.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Runs a command to completion (bounded by `timeoutMs`); resolves with stdout, rejects on failure. */
export function run(command: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} failed (${code ?? signal})\n${out}\n${err.slice(-4000)}`));
    });
  });
}

export interface Download {
  readonly bytes: number;
  readonly seconds: number;
}

/** Fetches a URL as fast as possible, discarding the body: curl to /dev/null when present, else a Node client counting bytes. */
/** `accept`: an Accept header (a columnar format: Arrow, Parquet); none by default (the JSON row stream). */
export async function download(url: string, acceptEncoding?: string, accept?: string): Promise<Download> {
  try {
    const args = ['-s', '-o', '/dev/null', '--max-time', '120', '-w', '%{size_download} %{time_total} %{http_code}'];
    if (acceptEncoding) args.push('-H', `accept-encoding: ${acceptEncoding}`);
    if (accept) args.push('-H', `accept: ${accept}`);
    const out = await run('curl', [...args, url], 130_000);
    const [bytes, seconds, status] = out.trim().split(' ');
    if (status !== '200') throw new Error(`GET ${url}: status ${status}`);
    return { bytes: Number(bytes), seconds: Number(seconds) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && !String(e).includes('ENOENT')) throw e;
  }
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { headers: { ...(acceptEncoding && { 'accept-encoding': acceptEncoding }), ...(accept && { accept }) } }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ bytes, seconds: (performance.now() - started) / 1000 }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** Fetches a URL once and returns status and body (small responses). */
export function fetchText(url: string, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU time (user + system, seconds) a process has used so far (Linux /proc), undefined elsewhere. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at state; utime and stime are
    // fields 14 and 15, in clock ticks (USER_HZ, 100 per second on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in bytes (Linux /proc), undefined elsewhere. */
export function rssOf(pid: number): number | undefined {
  return memOf(pid)?.rss;
}

/**
 * Resident memory of a process split as Linux reports it (/proc/<pid>/status, bytes): `rss` total,
 * `anon` (RssAnon: the JS heap, Buffers, malloc; the memory the process itself holds) and `file`
 * (RssFile: file-backed pages, mostly the LMDB memory map a scan touches, which the kernel can
 * drop at will). Undefined off Linux.
 */
export interface Mem {
  readonly rss: number;
  readonly anon: number;
  readonly file: number;
}

export function memOf(pid: number): Mem | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number | undefined => {
      const m = new RegExp(`${name}:\\s+(\\d+) kB`).exec(text);
      return m ? Number(m[1]) * 1024 : undefined;
    };
    const rss = kb('VmRSS');
    if (rss === undefined) return undefined;
    return { rss, anon: kb('RssAnon') ?? rss, file: kb('RssFile') ?? 0 };
  } catch {
    return undefined;
  }
}

export interface SlowRead {
  readonly bytes: number;
  readonly seconds: number;
  readonly rssBefore?: number;
  readonly rssMax?: number;
  /** RssAnon / RssFile before the read and their maxima while it ran (sampled every 250 ms). */
  readonly anonBefore?: number;
  readonly anonMax?: number;
  readonly fileBefore?: number;
  readonly fileMax?: number;
}

/** Reads a response at about `bytesPerSecond` for `seconds`, sampling the server's RSS, then hangs up. */
export function slowRead(url: string, bytesPerSecond: number, seconds: number, serverPid: number): Promise<SlowRead> {
  return new Promise((resolve, reject) => {
    const before = memOf(serverPid);
    const rssBefore = before?.rss;
    let rssMax = rssBefore;
    let anonMax = before?.anon;
    let fileMax = before?.file;
    let bytes = 0;
    const started = performance.now();
    const sampler = setInterval(() => {
      const m = memOf(serverPid);
      if (m === undefined) return;
      rssMax = Math.max(rssMax ?? 0, m.rss);
      anonMax = Math.max(anonMax ?? 0, m.anon);
      fileMax = Math.max(fileMax ?? 0, m.file);
    }, 250);
    const req = get(url, (res) => {
      const ticker = setInterval(() => {
        const elapsed = (performance.now() - started) / 1000;
        if (elapsed >= seconds) {
          clearInterval(ticker);
          clearInterval(sampler);
          req.destroy();
          resolve({ bytes, seconds: elapsed, rssBefore, rssMax, anonBefore: before?.anon, anonMax, fileBefore: before?.file, fileMax });
          return;
        }
        if (bytes < bytesPerSecond * elapsed) res.resume();
      }, 20);
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        const elapsed = (performance.now() - started) / 1000;
        if (bytes >= bytesPerSecond * elapsed) res.pause();
      });
      res.on('error', () => undefined);
    });
    req.on('error', (e) => {
      if (bytes === 0) {
        clearInterval(sampler);
        reject(e);
      }
    });
  });
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  readonly errors: number;
  readonly non2xx: number;
}

interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  requests?: unknown[];
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}
type Autocannon = (opts: AutocannonOptions, cb: (err: Error | null, result: AutocannonResult) => void) => unknown;
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** One autocannon run (bounded by `duration` seconds). */
export function load(opts: AutocannonOptions): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, r) => {
      if (err) return reject(err);
      resolve({
        requestsPerSecond: r.requests.average,
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        requests: r.requests.total,
        errors: r.errors + r.timeouts,
        non2xx: r.non2xx,
      });
    });
  });
}

export { sleep };
