/**
 * Loaded before every test file (package.json's tap `node-arg`): when coverage is off, the processes
 * a test starts (the CLI, gateways, Python) start without tap's process-tracking hook.
 *
 * tap starts each test file with `--import @tapjs/processinfo/import`, and processinfo adds the same
 * import to the NODE_OPTIONS of every process a test spawns (through the package process-on-spawn),
 * even one given its own environment. That hook records each process for coverage; in a process that
 * loads the gateway it cost 0.3-0.4 s of CPU at start (`node dist/tools/rowgate.js --version`: 0.25
 * s bare, 0.6 s with it), and the integration tests start several hundred such processes. With
 * coverage off (`"disable-coverage": true`, tap's default here), nothing reads those records, so a
 * spawn listener registered after processinfo's takes the import back out. `npm run coverage` turns
 * coverage on, and this module then does nothing.
 *
 * This is the one place that reaches into tap's internals (process-on-spawn's listener list and
 * processinfo's NODE_OPTIONS entry): test/cli/plain-children.test.ts fails if an upgrade changes
 * either, and the run would only be slower, never wrong.
 */
import { createRequire } from 'node:module';

interface SpawnOptions {
  env: Record<string, string | undefined>;
}
type OnSpawn = { addListener(listener: (options: SpawnOptions) => void): void };

/** tap's processinfo import, as it appears in NODE_OPTIONS (quoted or not). */
const PROCESSINFO_IMPORT = /\s*"?--(?:import|loader)=[^\s"]*@tapjs\/processinfo\/[^\s"]*"?/g;

export function withoutProcessinfo(nodeOptions: string): string {
  return nodeOptions.replace(PROCESSINFO_IMPORT, '').trim();
}

if (process.env._TAPJS_PROCESSINFO_COVERAGE_ === '0') {
  // Resolved from processinfo's own folder: process-on-spawn keeps its listeners in one global
  // list, so this is the same list processinfo added its listener to.
  const fromProcessinfo = createRequire(createRequire(import.meta.url).resolve('@tapjs/processinfo'));
  const onSpawn = fromProcessinfo('process-on-spawn') as OnSpawn;
  onSpawn.addListener((options) => {
    const nodeOptions = options.env.NODE_OPTIONS;
    if (nodeOptions === undefined) return;
    const rest = withoutProcessinfo(nodeOptions);
    const env = { ...options.env };
    if (rest === '') delete env.NODE_OPTIONS;
    else env.NODE_OPTIONS = rest;
    options.env = env;
  });
}
