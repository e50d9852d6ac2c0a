/**
 * Loaded before every test of `npm run test:unit` (its --node-arg=--import): the unit layer holds
 * tests that need no socket, no child process and no emulator (issue #31), so it runs in well under
 * a minute on any machine. Here opening a socket, listening, or starting a process throws, naming
 * the rule; a test that needs one belongs in an integration folder (test/http/, test/cli/,
 * test/bigtable/, test/engines/), which test:unit leaves out. Worker threads stay allowed (the LMDB
 * scan threads are in-process). `npm test` runs the same files without this guard.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

export const UNIT_RULE =
  'test:unit runs tests without sockets, child processes or emulator; move a test that needs one to test/http/, test/cli/, test/bigtable/ or test/engines/';

function refuse(what: string): never {
  throw new Error(`${what} in a unit test: ${UNIT_RULE}`);
}

net.Server.prototype.listen = function listen(): never {
  return refuse('a server listening');
};
net.Socket.prototype.connect = function connect(): never {
  return refuse('a socket connecting');
};
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  Object.defineProperty(childProcess, name, { value: () => refuse(`child_process.${name}`), writable: true, configurable: true });
}
// Named imports (import { spawn } from 'node:child_process') are bindings of the builtin's ESM
// facade: this copies the replacements into them before any test module is loaded.
syncBuiltinESMExports();
