/**
 * test/support/plain-children.ts: with coverage off, a process a test starts carries no tap
 * process-tracking import (it cost each CLI process 0.3-0.4 s of CPU). Fails when a tap upgrade
 * changes how processinfo reaches children, so the support module can be mended or dropped.
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { withoutProcessinfo } from '../support/plain-children.js';

const PI = '--import=file:///r/node_modules/@tapjs/processinfo/dist/esm/import.mjs';

t.test('withoutProcessinfo takes out only processinfo’s import, quoted or not', async (t) => {
  t.equal(withoutProcessinfo(`"${PI}"`), '');
  t.equal(withoutProcessinfo(PI), '');
  t.equal(withoutProcessinfo(`--max-old-space-size=512 "${PI}"`), '--max-old-space-size=512');
  t.equal(withoutProcessinfo(`--enable-source-maps ${PI} --no-warnings`), '--enable-source-maps --no-warnings');
  t.equal(withoutProcessinfo('--import=./x.js'), '--import=./x.js', 'another import stays');
});

const underTap = process.env.TAP === '1';
t.test(
  'a spawned child gets no processinfo import when coverage is off, and keeps its own options',
  { skip: underTap ? false : 'runs under tap, whose runner adds the import' },
  async (t) => {
    const coverage = process.env._TAPJS_PROCESSINFO_COVERAGE_;
    t.equal(coverage, '0', 'tap still says coverage is off in _TAPJS_PROCESSINFO_COVERAGE_');
    const read = (env?: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, ['-e', 'process.stdout.write(process.env.NODE_OPTIONS ?? "<unset>")'], { encoding: 'utf8', env }).stdout;
    t.equal(read(), '<unset>', 'inherited environment: no NODE_OPTIONS left');
    // processinfo rewrites NODE_OPTIONS with each option quoted, which node reads the same.
    t.match(read({ ...process.env, NODE_OPTIONS: '--max-old-space-size=300' }), /^"?--max-old-space-size=300"?$/, 'its own NODE_OPTIONS kept, alone');
    t.match(process.env.NODE_OPTIONS ?? '', /@tapjs\/processinfo/, 'tap gave this test process the import: the case the module handles');
    // package.json's tap "plugin" drops @tapjs/typescript; tap applies that to test processes only
    // once rebuilt (its first run would still load the plugin), hence `tap build` in prepare.
    t.notMatch(process.execArgv.join(' '), /@tapjs\/typescript/, 'no TypeScript loader in this test process (tap built without its plugin)');
  },
);
