import t from 'tap';
import {
  compileColumnFilter,
  DEFAULT_LIMIT,
  END_OF_TIME,
  parseLimit,
  parseReadSpec,
  parseTimerange,
  parseVersions,
  selectedFamilies,
  selectsCell,
  timestampInRange,
} from '../../lib/model/read/read-request.js';
import { parseColumns } from '../../lib/model/read/columns-param.js';
import { FOREVER, type ReadSpec } from '../../lib/model/types.js';
import { handLayout, inline } from './helpers/hand-layout.js';

const layout = handLayout('sample_table', {
  group_family: { columns: { string_qualifier: inline('"string"'), long_qualifier: inline('"long"') } },
  strings: { map: inline('"string"') },
  longs: { map: inline('"long"') },
});

const cols = (text?: string) => parseReadSpec(layout, { cols: text }).columns;

t.test('defaults: all columns, 1 version, all time', async (t) => {
  t.same(parseReadSpec(layout, {}), { maxVersions: 1, minTimestamp: 0, maxTimestamp: END_OF_TIME });
  t.notOk('columns' in parseReadSpec(layout, {}));
});

t.test('cols: *, bare families, family:qualifier, f: as the family, sorted', async (t) => {
  t.equal(cols('*'), undefined);
  t.equal(cols(' * '), undefined);
  t.equal(cols('strings,*'), undefined, '* anywhere selects everything');
  t.same(cols('strings'), [{ family: 'strings' }]);
  t.same(cols('group_family'), [{ family: 'group_family' }], 'a group family stays one selector');
  t.same(cols('strings:'), [{ family: 'strings' }]);
  t.same(cols('strings:apple iphone,group_family:long_qualifier'), [
    { family: 'group_family', qualifier: 'long_qualifier' },
    { family: 'strings', qualifier: 'apple iphone' },
  ]);
  t.same(cols('strings:a:b'), [{ family: 'strings', qualifier: 'a:b' }], 'split at the first colon');
  t.same(cols('longs, strings ,'), [{ family: 'longs' }, { family: 'strings' }], 'items trimmed, empty items skipped');
});

t.test('cols: duplicates collapse and a family absorbs its own columns', async (t) => {
  t.same(cols('strings:x,strings:x,strings:y'), [
    { family: 'strings', qualifier: 'x' },
    { family: 'strings', qualifier: 'y' },
  ]);
  t.same(cols('strings:x,strings,strings:y'), [{ family: 'strings' }]);
  t.same(cols('group_family:string_qualifier,group_family'), [{ family: 'group_family' }]);
});

t.test('cols: unknown families and undeclared group columns are RG_ERR_BAD_COLUMNS naming them', async (t) => {
  t.throws(() => cols('group_familyy'), { code: 'RG_ERR_BAD_COLUMNS', message: 'cols names an unknown family: "group_familyy" (in "group_familyy")' });
  t.throws(() => cols('nope:q'), { code: 'RG_ERR_BAD_COLUMNS', message: 'cols names an unknown family: "nope" (in "nope:q")' });
  t.throws(() => cols('strings,nope:q'), {
    code: 'RG_ERR_BAD_COLUMNS',
    message: /^cols names an unknown family: "nope" \(in "nope:q"\); "," separates columns in cols: a qualifier holding a comma is named with the JSON form/,
  });
  t.throws(() => cols('group_family:nope'), { code: 'RG_ERR_BAD_COLUMNS', message: 'cols names an unknown column: "group_family:nope"' });
  t.throws(() => cols(':q'), { code: 'RG_ERR_BAD_COLUMNS', message: /unknown family: ""/ });
  t.throws(() => cols(''), { code: 'RG_ERR_BAD_COLUMNS', message: 'cols selects no column: ""' });
  t.throws(() => cols(' , '), { code: 'RG_ERR_BAD_COLUMNS', message: 'cols selects no column: " , "' });
});

t.test('cols in the JSON form: exact names, so any qualifier a map family holds can be named', async (t) => {
  t.same(cols('["strings:a,b"]'), [{ family: 'strings', qualifier: 'a,b' }], 'a comma inside a qualifier');
  t.same(
    cols('["strings:tab\\t", "strings: lead"]'),
    [
      { family: 'strings', qualifier: ' lead' },
      { family: 'strings', qualifier: 'tab\t' },
    ],
    'whitespace is kept, not trimmed',
  );
  t.same(cols('["strings:"]'), [{ family: 'strings', qualifier: '' }], '"family:" is the empty qualifier');
  t.same(cols('["strings"]'), [{ family: 'strings' }], '"family" is the whole family');
  t.same(
    cols('["strings:x:y", "group_family:long_qualifier", "strings:x:y"]'),
    [
      { family: 'group_family', qualifier: 'long_qualifier' },
      { family: 'strings', qualifier: 'x:y' },
    ],
    'split at the first colon, duplicates collapse, sorted',
  );
  t.same(cols('["strings:*"]'), [{ family: 'strings', qualifier: '*' }], '* is an ordinary qualifier there');
  t.throws(
    () => cols('["group_family:"]'),
    { code: 'RG_ERR_BAD_COLUMNS', message: 'cols names an unknown column: "group_family:"' },
    'a group family has no empty qualifier',
  );
  t.throws(() => cols('[" strings"]'), { code: 'RG_ERR_BAD_COLUMNS', message: 'cols names an unknown family: " strings" (in " strings")' }, 'no trimming');
  t.throws(() => cols('["*"]'), { code: 'RG_ERR_BAD_COLUMNS', message: /unknown family: "\*"/ });
  t.throws(() => cols('[]'), { code: 'RG_ERR_BAD_COLUMNS', message: 'cols selects no column: "[]"' });
  t.throws(() => cols('["strings",'), { code: 'RG_ERR_BAD_COLUMNS', message: /^cols starts with "\[" but is not a JSON array of column names/ });
  t.throws(() => cols('[1]'), { code: 'RG_ERR_BAD_COLUMNS', message: /^cols in the JSON form must be an array of strings/ });
  t.throws(() => cols('[["strings","q"]]'), { code: 'RG_ERR_BAD_COLUMNS', message: /^cols in the JSON form must be an array of strings/ });
});

t.test('cols of a DELETE: a map family\'s "family:" and a "*" among columns are refused, not guessed', async (t) => {
  const del = (text?: string) => parseColumns(layout, text, 'delete');
  t.equal(del(undefined), undefined, 'absent: the whole row');
  t.equal(del(' * '), undefined, '*: the whole row');
  t.throws(() => del('strings:'), {
    code: 'RG_ERR_BAD_COLUMNS',
    message:
      'cols item "strings:" is ambiguous in a DELETE: write "strings" to delete the whole family, or cols=["strings:"] (the JSON form) to delete the column whose qualifier is empty',
  });
  t.throws(() => del('longs,strings:'), { code: 'RG_ERR_BAD_COLUMNS', message: /"strings:" is ambiguous/ });
  t.same(del('group_family:'), [{ family: 'group_family' }], 'a group family has no empty qualifier: "family:" is the family');
  t.same(del('["strings:"]'), [{ family: 'strings', qualifier: '' }], 'the JSON form names the empty qualifier');
  t.same(del('strings, strings:a'), [{ family: 'strings' }], 'the same names as a read');
  t.throws(() => del('strings,*'), { code: 'RG_ERR_BAD_COLUMNS', message: /^cols=\* deletes the whole row and cannot be combined with other columns/ });
  t.throws(() => del('nope'), { code: 'RG_ERR_BAD_COLUMNS', message: 'cols names an unknown family: "nope" (in "nope")' });
});

t.test('versions: positive integers, all/ALL, clamp at FOREVER; anything else is RG_ERR_BAD_VERSIONS', async (t) => {
  t.equal(parseVersions(undefined), 1);
  t.equal(parseVersions('10'), 10);
  t.equal(parseVersions('010'), 10);
  t.equal(parseVersions('all'), FOREVER);
  t.equal(parseVersions('ALL'), FOREVER);
  t.equal(parseVersions('All'), FOREVER);
  t.equal(parseVersions('99999999999'), FOREVER);
  for (const bad of ['0', '-1', 'abc', '', '1.5', '+3', ' 3', '1e3']) {
    t.throws(
      () => parseVersions(bad),
      { code: 'RG_ERR_BAD_VERSIONS', message: `versions must be a positive integer or "all", got ${JSON.stringify(bad)}` },
      bad,
    );
  }
  t.equal(parseReadSpec(layout, { versions: 'all' }).maxVersions, FOREVER);
});

t.test('timerange: min..max half-open, either side optional; malformed or empty ranges are RG_ERR_BAD_TIMERANGE', async (t) => {
  t.same(parseTimerange('1..6'), [1, 6]);
  t.same(parseTimerange('3141592..'), [3141592, END_OF_TIME]);
  t.same(parseTimerange('..3'), [0, 3]);
  t.same(parseTimerange('..'), [0, END_OF_TIME]);
  for (const bad of ['5', 'a..b', '-1..5', '1...5', '1..2..3', '', ' 1..2', '1.5..2']) {
    t.throws(
      () => parseTimerange(bad),
      {
        code: 'RG_ERR_BAD_TIMERANGE',
        message: `timerange must be min..max with non-negative integer bounds (one side may be empty), got ${JSON.stringify(bad)}`,
      },
      bad,
    );
  }
  for (const bad of ['5..5', '6..2', '9223372036854775807..']) {
    t.throws(() => parseTimerange(bad), { code: 'RG_ERR_BAD_TIMERANGE', message: `timerange min must be less than max, got ${JSON.stringify(bad)}` }, bad);
  }
  t.same(parseReadSpec(layout, { timerange: '2..3' }), { maxVersions: 1, minTimestamp: 2, maxTimestamp: 3 });
});

t.test('timerange: bounds are exact longs (bigints beyond 2^53-1) up to 2^63-1, a max written out exclusive', async (t) => {
  const LONG_MAX = 9223372036854775807n;
  t.equal(END_OF_TIME, Infinity, 'no upper bound: every timestamp compares below it');
  // Each pair was one number after Number(): "min must be less than max" before BigInt comparison.
  t.same(parseTimerange('9007199254740992..9007199254740993'), [2n ** 53n, 2n ** 53n + 1n], 'exact beyond 2^53-1');
  t.same(parseTimerange('9007199254740991..9007199254740992'), [9007199254740991, 2n ** 53n], 'a number up to 2^53-1, a bigint beyond');
  t.same(parseTimerange('9223372036854775806..9223372036854775807'), [LONG_MAX - 1n, LONG_MAX], 'a max of Long.MAX_VALUE is exclusive like any other');
  t.same(parseTimerange('5..9223372036854775807'), [5, LONG_MAX]);
  t.same(parseTimerange('9007199254740993..'), [2n ** 53n + 1n, END_OF_TIME], 'an empty max is no upper bound');
  // Beyond a Java long: a 400 naming the bound, as every other timestamp beyond 2^63-1 is.
  for (const bad of [
    '0..99999999999999999999',
    '5..9223372036854775808',
    '9223372036854775806..9223372036854775808',
    '9223372036854775808..9223372036854775809',
    '9223372036854775808..',
    '18446744073709551616..9223372036854775807',
  ]) {
    const beyond = /([0-9]{19,})/.exec(bad.split('..').find((b) => b !== '' && BigInt(b) > LONG_MAX)!)![1];
    t.throws(
      () => parseTimerange(bad),
      { code: 'RG_ERR_BAD_TIMERANGE', message: `timerange bounds must be from 0 to ${LONG_MAX}, got ${beyond} in ${JSON.stringify(bad)}` },
      bad,
    );
  }
  t.same(parseTimerange('9007199254740989..9007199254740990'), [9007199254740989, 9007199254740990]);
  // min >= max compared exactly, also where Number() would have made them unequal or equal wrongly.
  for (const bad of ['9007199254740993..9007199254740992', '9007199254740993..9007199254740993', '9223372036854775807..']) {
    t.throws(() => parseTimerange(bad), { code: 'RG_ERR_BAD_TIMERANGE', message: `timerange min must be less than max, got ${JSON.stringify(bad)}` }, bad);
  }
  t.same(parseTimerange('00009007199254740992..009007199254740993'), [2n ** 53n, 2n ** 53n + 1n], 'leading zeros');
});

t.test('timerange: what the stores get selects exactly the cells of [min, max) over every long', async (t) => {
  const TWO_53 = 2n ** 53n;
  const LONG_MAX = 2n ** 63n - 1n;
  const cellsAt = [
    0n,
    1n,
    2n,
    1_700_000_000_000n,
    TWO_53 - 3n,
    TWO_53 - 2n,
    TWO_53 - 1n,
    TWO_53,
    TWO_53 + 1n,
    TWO_53 + 2n,
    8646911284551352319n,
    LONG_MAX - 1n,
    LONG_MAX,
  ];
  const bounds = [
    0n,
    1n,
    2n,
    3n,
    1_700_000_000_000n,
    TWO_53 - 3n,
    TWO_53 - 2n,
    TWO_53 - 1n,
    TWO_53,
    TWO_53 + 1n,
    TWO_53 + 2n,
    LONG_MAX - 1n,
    LONG_MAX,
    LONG_MAX + 1n,
    10n ** 20n,
  ];
  // A cell's timestamp as the stores hold it: a number up to 2^53-1, a bigint beyond.
  const asTimestamp = (ts: bigint) => (ts < TWO_53 ? Number(ts) : ts);
  for (const min of [undefined, ...bounds]) {
    for (const max of [undefined, ...bounds]) {
      const text = `${min ?? ''}..${max ?? ''}`;
      const lo = min ?? 0n;
      const hi = max ?? LONG_MAX;
      if (!(lo < hi) || lo > LONG_MAX || hi > LONG_MAX) {
        t.throws(() => parseTimerange(text), { code: 'RG_ERR_BAD_TIMERANGE' }, text);
        continue;
      }
      const [minTimestamp, maxTimestamp] = parseTimerange(text);
      const spec: ReadSpec = { maxVersions: 1, minTimestamp, maxTimestamp };
      const got = cellsAt.filter((ts) => timestampInRange(spec, asTimestamp(ts)));
      // Only an empty max reads a cell at Long.MAX_VALUE: a max written out is exclusive.
      const want = cellsAt.filter((ts) => ts >= lo && (ts < hi || max === undefined));
      t.same(got, want, text);
    }
  }
});

t.test('limit: integer >= -1, default 100, optional maximum; errors are RG_ERR_BAD_LIMIT', async (t) => {
  t.equal(parseLimit(undefined), DEFAULT_LIMIT);
  t.equal(parseLimit(undefined), 100);
  t.equal(parseLimit('-1'), -1);
  t.equal(parseLimit('0'), 0);
  t.equal(parseLimit('25'), 25);
  t.equal(parseLimit('1000', 1000), 1000);
  t.equal(parseLimit(undefined, 50), 50, 'the default never exceeds the maximum');
  for (const bad of ['-2', 'abc', '', '1.5', '99999999999999999999', ' 1']) {
    t.throws(() => parseLimit(bad), { code: 'RG_ERR_BAD_LIMIT', message: `limit must be an integer >= -1, got ${JSON.stringify(bad)}` }, bad);
  }
  t.throws(() => parseLimit('1001', 1000), { code: 'RG_ERR_BAD_LIMIT', message: 'limit 1001 exceeds the maximum of 1000 rows per request' });
  t.throws(() => parseLimit('-1', 1000), { code: 'RG_ERR_BAD_LIMIT', message: 'limit -1 exceeds the maximum of 1000 rows per request' });
});

t.test('column filter: every column, whole families, single columns', async (t) => {
  const all = parseReadSpec(layout, {});
  t.ok(selectsCell(all, 'anything', 'x'));
  t.equal(selectedFamilies(all), undefined);
  const some = parseReadSpec(layout, { cols: 'strings,group_family:long_qualifier' });
  const f = compileColumnFilter(some);
  t.equal(compileColumnFilter(some), f, 'compiled once per spec');
  t.ok(f('strings', 'anything'));
  t.ok(f('group_family', 'long_qualifier'));
  t.notOk(f('group_family', 'string_qualifier'));
  t.notOk(f('longs', 'x'));
  t.same([...(selectedFamilies(some) ?? [])].sort(), ['group_family', 'strings']);
});

t.test('timestampInRange: [min, max), with END_OF_TIME unbounded', async (t) => {
  const spec: ReadSpec = { maxVersions: 1, minTimestamp: 2, maxTimestamp: 3 };
  t.notOk(timestampInRange(spec, 1));
  t.ok(timestampInRange(spec, 2));
  t.notOk(timestampInRange(spec, 3));
  const open: ReadSpec = { maxVersions: 1, minTimestamp: 0, maxTimestamp: END_OF_TIME };
  t.ok(timestampInRange(open, 2n ** 63n - 1n), 'a cell at the largest timestamp is still read');
  t.ok(timestampInRange({ maxVersions: 1, minTimestamp: 2n ** 53n + 1n, maxTimestamp: 2n ** 53n + 2n }, 2n ** 53n + 1n), 'bigint bounds and cells');
  t.notOk(timestampInRange({ maxVersions: 1, minTimestamp: 2n ** 53n + 1n, maxTimestamp: 2n ** 53n + 2n }, 2 ** 53 - 1));
});

t.test('random cols lists: the filter selects exactly the requested cells', async (t) => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const items = ['strings', 'strings:a', 'strings:b', 'longs:a', 'group_family', 'group_family:long_qualifier', 'group_family:string_qualifier'];
  const cells: [string, string][] = [
    ['strings', 'a'],
    ['strings', 'b'],
    ['strings', 'c'],
    ['longs', 'a'],
    ['longs', 'b'],
    ['group_family', 'long_qualifier'],
    ['group_family', 'string_qualifier'],
  ];
  for (let i = 0; i < 200; i++) {
    const chosen = items.filter(() => rnd() < 0.35);
    if (chosen.length === 0) continue;
    const f = compileColumnFilter(parseReadSpec(layout, { cols: chosen.join(',') }));
    for (const [fam, q] of cells) {
      const expected = chosen.includes(fam) || chosen.includes(`${fam}:${q}`);
      t.equal(f(fam, q), expected, `${chosen.join(',')} ? ${fam}:${q}`);
    }
    if (!t.passing()) break;
  }
});
