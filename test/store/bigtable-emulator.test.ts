/**
 * The emulator helper without an emulator: the Bigtable test files skip with a message naming what
 * is missing, unless ROWGATE_REQUIRE_BIGTABLE=1 (set by .ci/run), where a missing emulator fails them.
 */
import t from 'tap';

type Helper = typeof import('./bigtable-emulator.js');

t.test('no cbtemulator: skip locally, fail when Bigtable is required', async (t) => {
  // Absolute URLs: tap resolves a relative one against the test's source-mapped path (test/, not
  // dist/test/), where no compiled helper is.
  const helper = await t.mockImport<Helper>(new URL('./bigtable-emulator.js', import.meta.url).href, {
    [new URL('../../bench/cbtemulator.js', import.meta.url).href]: {
      findCbtemulator: () => undefined,
      startCbtemulator: () => Promise.reject(new Error('not called')),
    },
  });
  const saved = process.env.ROWGATE_REQUIRE_BIGTABLE;
  t.teardown(() => {
    if (saved === undefined) delete process.env.ROWGATE_REQUIRE_BIGTABLE;
    else process.env.ROWGATE_REQUIRE_BIGTABLE = saved;
  });
  delete process.env.ROWGATE_REQUIRE_BIGTABLE;
  t.equal(await helper.startEmulator(), undefined, 'absent: undefined, so the file skips');
  t.match(helper.EMULATOR_MISSING, /cbtemulator .* was not found on PATH or under <google-cloud-sdk>\/platform\/bigtable-emulator\//);
  process.env.ROWGATE_REQUIRE_BIGTABLE = '1';
  await t.rejects(helper.startEmulator(), { message: /^ROWGATE_REQUIRE_BIGTABLE=1 but cbtemulator \(the Cloud Bigtable emulator\) was not found/ });
});
