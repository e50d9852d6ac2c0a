/** Structured logs (pino, JSON lines on stderr so stdout stays free for command output). */
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'rowgate' } }, pino.destination(2));
}
