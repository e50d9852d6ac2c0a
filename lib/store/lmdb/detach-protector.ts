/**
 * V8 compiles typed-array reads on the promise that no ArrayBuffer of the thread has ever been
 * detached (its "array buffer detaching protector"), and throws away every function compiled so
 * the first time one is. A scan thread detaches each chunk's buffer as it moves it to the main
 * thread, so its first chunk threw away the render path it had just compiled, to be compiled
 * again: a Parquet export of the 1,000,000 bench rows marked 54 functions for deoptimization so
 * (`--trace-deopt`), 6-13 when the thread had detached a buffer of its own at start-up, and took
 * 1.18-1.24 s against 1.23-1.31 s (six alternated pairs).
 */

/** Spends the promise before any code is hot: detaches an empty buffer of its own. */
export function detachOnce(): void {
  const spent = new ArrayBuffer(0);
  structuredClone(spent, { transfer: [spent] });
}
