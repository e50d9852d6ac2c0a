/**
 * The example layout of docs/getting-started.md (docs/examples/page-views.json) is one rowgate
 * accepts, its key options mean what the page says they mean, and the page shows the file as it is.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { encodeRowKey } from '../lib/model/keys/row-key.js';
import { parseLayout } from '../lib/model/layout/layout.js';

const LAYOUT_FILE = 'docs/examples/page-views.json';
const PAGE = 'docs/getting-started.md';
const text = readFileSync(LAYOUT_FILE, 'utf8');

t.test('the example layout parses and is the table the page describes', async (t) => {
  const layout = parseLayout(text);
  t.equal(layout.name, 'page_views');
  t.match(layout.keyFormat, { encoding: 'FORMATTED', hashSize: 2, rangeScanStartIndex: 1, nullableStartIndex: 2, suppressMaterialization: false });
  const view = layout.families.get('view');
  t.same(
    view?.columns.map((c) => [c.name, c.schema.type]),
    [
      ['path', 'INLINE'],
      ['referrer', 'INLINE'],
      ['load_ms', 'INLINE'],
      ['clicks', 'COUNTER'],
    ],
  );
  t.equal(layout.families.get('utm')?.mapSchema?.type, 'INLINE', 'utm is a map family');
  t.same(parseLayout(layout.desc).desc, layout.desc, 'the normalized layout parses back to itself');
});

t.test('nullable_start_index: 2 makes site and time required, visitor optional', async (t) => {
  const { keyFormat } = parseLayout(text);
  const anonymous = encodeRowKey(keyFormat, ['example.org', 1767225660000n]);
  const known = encodeRowKey(keyFormat, ['example.org', 1767225660000n, 'v-1001']);
  t.same(known.subarray(0, anonymous.length), anonymous, "a visitor's view sorts right after the anonymous one");
  t.equal(known.subarray(0, 2).toString('hex'), anonymous.subarray(0, 2).toString('hex'), 'the salt hashes the site alone');
  t.throws(() => encodeRowKey(keyFormat, ['example.org']), {
    code: 'RG_ERR_BAD_ENTITY_ID',
    message: 'entity id has 1 component but the table key needs at least 2 (components before index 2 cannot be null): ["example.org"]',
  });
});

t.test('left out, nullable_start_index is 1: only the first component is required, as in Kiji', async (t) => {
  const loose = JSON.parse(text) as { keys_format: Record<string, unknown> };
  delete loose.keys_format.nullable_start_index;
  const { keyFormat } = parseLayout(loose);
  t.match(keyFormat, { nullableStartIndex: 1 });
  t.ok(encodeRowKey(keyFormat, ['example.org']).length > 2, 'a site alone is an entity id');
});

t.test('docs/getting-started.md shows the example layout as the file holds it', async (t) => {
  const page = readFileSync(PAGE, 'utf8');
  const shown = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!);
  t.ok(
    shown.some((block) => block === text),
    `a json block of ${PAGE} is ${LAYOUT_FILE} byte for byte`,
  );
});
