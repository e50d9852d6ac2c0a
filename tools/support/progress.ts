/**
 * Progress for long-running commands: a cli-progress bar on stderr when stderr is a terminal,
 * nothing otherwise (pipes, files, CI logs stay clean).
 */
import { createRequire } from 'node:module';

/** cli-progress and its modules, loaded only for a terminal: a command's output to a pipe or file never draws a bar (config.ts's parseYaml says what loading them cost). */
const loadCliProgress = (): typeof import('cli-progress') => createRequire(import.meta.url)('cli-progress') as typeof import('cli-progress');

export interface Progress {
  /** `done` counts what the bar measures; payload values fill the {name} tokens of the format. */
  update(done: number, payload?: Record<string, string | number>): void;
  stop(): void;
}

const NONE: Progress = { update: () => undefined, stop: () => undefined };

/**
 * `format` uses cli-progress tokens ({bar}, {percentage}, {value}, {total}, {eta_formatted},
 * {duration_formatted}) and payload names; `total` undefined = unknown (use a format without {bar}).
 */
export function startProgress(format: string, total: number | undefined, payload: Record<string, string | number> = {}): Progress {
  if (!process.stderr.isTTY) return NONE;
  const cliProgress = loadCliProgress();
  const bar = new cliProgress.SingleBar(
    { format, stream: process.stderr, hideCursor: true, barsize: 30, fps: 5, etaBuffer: 50, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total ?? 0, 0, payload);
  let stopped = false;
  return {
    update: (done, more) => bar.update(done, more),
    stop: () => {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}

/** `count` per second as a whole number, as the summary lines print rates. */
export function rateText(count: number, seconds: number): string {
  return seconds > 0 ? String(Math.round(count / seconds)) : '0';
}
