/**
 * The revision-independent row suite (./suites/rows-suite.ts) under revisions 1 and 2: the same
 * tests as revision 3's (rows.test.ts), written through each revision's entity id forms. What only
 * revisions 1 and 2 have is in revisions-1-2-endpoints.test.ts.
 */
import t from 'tap';
import { rowsSuite } from './suites/rows-suite.js';

rowsSuite(t, { revision: 1, store: 'lmdb' });
rowsSuite(t, { revision: 2, store: 'lmdb' });
