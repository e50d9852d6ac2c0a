/**
 * Commands against a running gateway (`--url http://host:port [--token T]`) instead of a local
 * store: plain GETs of its revision 3 interface. The token comes from --token or, better (the
 * command line is visible to other users), the ROWGATE_TOKEN environment variable.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseLayout } from '../../lib/model/layout/layout.js';
import type { TableLayout } from '../../lib/model/types.js';
import { CliError, EXIT_USAGE } from './cli-error.js';
import { TOKEN_ENV } from './command-options.js';

/**
 * How requests to a gateway are retried after a failure with no answer (refused, reset, dropped)
 * or a 5xx: at most MAX_RETRIES times in a row, waiting FIRST_BACKOFF_MS, then twice as long
 * each time (0.2 + 0.4 + 0.8 + 1.6 + 3.2 = 6.2 s in all), so a gateway restarting is waited for
 * and one that is gone is given up on. remote-rows.ts retries its ranges by the same rule.
 */
export const MAX_RETRIES = 5;
export const FIRST_BACKOFF_MS = 200;

/** The wait before retry number `failures` (1, 2, ...). */
export function backoffMs(failures: number, first = FIRST_BACKOFF_MS): number {
  return first * 2 ** (failures - 1);
}

/** Waits `ms` before a retry; an abort ends the wait with the signal's reason (a Ctrl-C's Interrupted, not an AbortError). */
export async function waitToRetry(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (e) {
    throw signal?.aborted ? (signal.reason ?? e) : e;
  }
}

export interface RetryOptions {
  /** Ends the waits (and what is retried) at once. */
  readonly signal?: AbortSignal;
  /** Told each retry: the failure and the wait before it. */
  readonly onRetry?: (error: Error, waitMs: number) => void;
  /** Backoff before the first retry (tests shorten it). */
  readonly backoffMs?: number;
}

export interface RemoteFlags {
  readonly url?: string;
  readonly token?: string;
}

/** A failed request: `status` undefined when no HTTP answer came (connection refused, reset, dropped mid-body). */
export class RemoteError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RemoteError';
  }

  /** Worth trying again: no answer, a dropped stream, or the gateway busy or unavailable (5xx). */
  get retryable(): boolean {
    return this.status === undefined || this.status >= 500;
  }
}

export class Gateway {
  private readonly base: URL;
  private readonly token: string | undefined;

  /**
   * `retry`: how the whole-body requests (text, json, layout: the layout and splits an export
   * asks for before any row) are retried; rows are retried by remote-rows.ts.
   */
  constructor(
    flags: RemoteFlags,
    private readonly retry: RetryOptions = {},
  ) {
    let base: URL;
    try {
      base = new URL(flags.url!);
    } catch {
      throw new CliError(`--url ${flags.url}: not a URL (give http://host:port)`, EXIT_USAGE);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new CliError(`--url ${flags.url}: only http:// and https:// gateways`, EXIT_USAGE);
    this.base = base;
    this.token = flags.token ?? process.env[TOKEN_ENV];
  }

  /** What to do about a 401: the fix is on this side (a token to give, or the one given is wrong). */
  private authHint(status: number | undefined): string {
    if (status !== 401) return '';
    if (this.token === undefined) return `; give the gateway's token with --token or the ${TOKEN_ENV} environment variable`;
    return `; the token given (--token or ${TOKEN_ENV}) was refused`;
  }

  get url(): string {
    return this.base.origin + this.base.pathname.replace(/\/$/, '');
  }

  tablePath(instance: string, table: string): string {
    return `/v1/instances/${encodeURIComponent(instance)}/tables/${encodeURIComponent(table)}`;
  }

  /** A GET answered 200 (anything else is a RemoteError with the gateway's message); the caller reads the body. */
  open(path: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<IncomingMessage> {
    const url = new URL(this.base.pathname.replace(/\/$/, '') + path, this.base);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const all: Record<string, string> = { ...headers };
    if (this.token !== undefined) all.authorization = `Bearer ${this.token}`;
    return new Promise((resolve, reject) => {
      const req = send(url, { method: 'GET', headers: all, signal }, (res) => {
        if (res.statusCode === 200) {
          resolve(res);
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => reject(new RemoteError(`${url.pathname}: answered ${res.statusCode}`, res.statusCode)));
        res.on('end', () =>
          reject(
            new RemoteError(
              `${this.url}: ${errorText(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))}${this.authHint(res.statusCode)}`,
              res.statusCode,
            ),
          ),
        );
      });
      req.on('error', (e: NodeJS.ErrnoException) =>
        reject(new RemoteError(`${this.url}: ${e.code ?? e.message}${e.code === 'ABORT_ERR' ? '' : ` (${e.message})`}`)),
      );
      req.end();
    });
  }

  /**
   * A whole (small) body, retried as rows are: a gateway restarting before rows flow (refused, or
   * a socket hang up on the layout or splits request) is waited for, not the end of an export.
   */
  async text(path: string): Promise<string> {
    const { signal } = this.retry;
    for (let failures = 0; ;) {
      try {
        const res = await this.open(path, {}, signal);
        const chunks: Buffer[] = [];
        try {
          for await (const c of res) chunks.push(c as Buffer);
        } catch (e) {
          throw new RemoteError(`${this.url}: the connection dropped mid-answer (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
        }
        return Buffer.concat(chunks).toString('utf8');
      } catch (e) {
        if (signal?.aborted) throw signal.reason ?? e;
        if (!(e instanceof RemoteError) || !e.retryable) throw e;
        if (++failures > MAX_RETRIES) throw new RemoteError(`${e.message}; gave up after ${failures} attempts`, e.status);
        const wait = backoffMs(failures, this.retry.backoffMs);
        this.retry.onRetry?.(e, wait);
        await waitToRetry(wait, signal);
      }
    }
  }

  async json<T>(path: string): Promise<T> {
    return JSON.parse(await this.text(path)) as T;
  }

  async layout(instance: string, table: string): Promise<TableLayout> {
    return parseLayout(await this.json<Record<string, unknown>>(this.tablePath(instance, table)));
  }
}

/** The gateway's error body as one line: its message and code. */
function errorText(status: number, body: string): string {
  try {
    const e = JSON.parse(body) as { exception?: string; code?: string };
    if (typeof e.exception === 'string') return `${e.exception} (${status} ${e.code ?? ''})`.replace(/ \)$/, ')');
  } catch {
    // not a gateway error body
  }
  return `answered ${status}${body === '' ? '' : `: ${body.slice(0, 200)}`}`;
}

/** Runs a remote command, turning a RemoteError into the command's failure message. */
export async function remotely<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof RemoteError) throw new CliError(e.message);
    throw e;
  }
}
