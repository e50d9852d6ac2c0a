import t from 'tap';
import { REST_VERSION } from '../lib/version.js';
t.test('version is dotted numeric', async (t) => {
  t.match(REST_VERSION, /^\d+\.\d+\.\d+$/);
});
