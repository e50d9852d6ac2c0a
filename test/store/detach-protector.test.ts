// detachOnce (lib/store/lmdb/detach-protector.ts) spends V8's promise that no ArrayBuffer was ever
// detached, so a scan thread's compiled code survives its first chunk's move. Checked in a fresh
// thread (the promise is each isolate's own) with V8's test intrinsics: a function reading a typed
// array is compiled, a buffer is then detached (as a chunk's is when it is moved), and the function
// must still be compiled; without detachOnce first, the same detach throws its code away (the
// control, so the check can fail).
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import t from 'tap';

const MODULE = new URL('../../lib/store/lmdb/detach-protector.js', import.meta.url).href;

// For the threads' code below (%...): V8's flags are the process's.
setFlagsFromString('--allow-natives-syntax');

/** Whether the compiled reader survives a chunk buffer's detach, with or without detachOnce first. */
function compiledAfterMove(spendFirst: boolean): Promise<boolean> {
  const code = `
    const { parentPort } = require('node:worker_threads');
    (async () => {
      const { detachOnce } = await import(${JSON.stringify(MODULE)});
      ${spendFirst ? 'detachOnce();' : ''}
      const bytes = new Uint8Array(64);
      function sum(a) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]; return s; }
      %PrepareFunctionForOptimization(sum); sum(bytes); sum(bytes); %OptimizeFunctionOnNextCall(sum); sum(bytes);
      const TURBOFANNED = 1 << 4;
      if ((%GetOptimizationStatus(sum) & TURBOFANNED) === 0) throw new Error('the reader was not compiled');
      const chunk = new ArrayBuffer(1024);
      structuredClone(chunk, { transfer: [chunk] });
      parentPort.postMessage((%GetOptimizationStatus(sum) & TURBOFANNED) !== 0);
    })();
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true });
    worker.once('message', (compiled: boolean) => {
      resolve(compiled);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

t.test('after detachOnce, moving a buffer leaves compiled typed-array code in place', async (t) => {
  t.equal(await compiledAfterMove(true), true, 'with detachOnce at start-up: still compiled');
  t.equal(await compiledAfterMove(false), false, 'without it: the first move threw the code away');
});
