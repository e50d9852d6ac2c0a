/**
 * Structured logs (pino, JSON lines on stderr so stdout stays free for command output), written
 * through a LogSink (logging/log-sink.ts): pino's lines at once, request lines (http/request-log.ts) in
 * 64 KiB pieces, everything still waiting written synchronously when the process exits, by
 * process.exit() included, so the last lines (a shutdown's, a fatal error's) are never lost.
 */
import cluster from 'node:cluster';
import { pino, type Logger } from 'pino';
import { LogSink } from './log-sink.js';

const BASE = { service: 'rowgate' };

export function createLogger(level: string): Logger {
  // --workers: every worker writes to the primary's stderr, so writes must not split lines.
  return pino({ level, base: BASE }, new LogSink(2, { base: `,"service":${JSON.stringify(BASE.service)}`, shared: cluster.isWorker }));
}
