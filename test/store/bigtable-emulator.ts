/**
 * Starts the Cloud Bigtable emulator (`cbtemulator`, bench/cbtemulator.ts) for a test file and
 * points the file's Bigtable clients at it. When it is absent, `startEmulator` returns undefined and
 * EMULATOR_MISSING says what is missing, so the file can skip (or throws, when the environment
 * requires Bigtable: ROWGATE_REQUIRE_BIGTABLE=1, as in CI).
 */
import { findCbtemulator, startCbtemulator, type RunningEmulator } from '../../bench/cbtemulator.js';

export const EMULATOR_MISSING =
  'cbtemulator (the Cloud Bigtable emulator) was not found on PATH or under <google-cloud-sdk>/platform/bigtable-emulator/: install it with `gcloud components install bigtable` (or the google-cloud-cli-bigtable-emulator package)';

export type Emulator = RunningEmulator;

/**
 * Starts the emulator and points this process's Bigtable clients at it; undefined when absent,
 * unless ROWGATE_REQUIRE_BIGTABLE=1 (CI sets it): then a missing emulator is an error, so the
 * Bigtable tests fail instead of skipping unseen.
 */
export async function startEmulator(): Promise<Emulator | undefined> {
  const binary = findCbtemulator();
  if (!binary) {
    if (process.env.ROWGATE_REQUIRE_BIGTABLE === '1') throw new Error(`ROWGATE_REQUIRE_BIGTABLE=1 but ${EMULATOR_MISSING}`);
    return undefined;
  }
  const emulator = await startCbtemulator(binary);
  Object.assign(process.env, emulator.env);
  return emulator;
}
