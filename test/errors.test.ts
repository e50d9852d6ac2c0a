import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ERRORS, rgError, type ErrorCode } from '../lib/errors.js';

const codes = Object.keys(ERRORS) as ErrorCode[];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') && path !== join('lib', 'errors.ts') ? [path] : [];
  });
}

t.test('every registered code builds the documented error body', async (t) => {
  for (const code of codes) {
    const err = rgError(code, `message for ${code}`);
    t.same(Object.keys(err.toBody()), ['exceptionName', 'exception', 'status', 'code'], code);
    t.equal(err.toBody().status, ERRORS[code].status);
    t.ok(err.status >= 400 && err.status < 600, `${code} has an HTTP error status`);
    t.match(code, /^RG_ERR_[A-Z_]+$/);
    t.ok(ERRORS[code].when.length > 10, `${code} says when it is raised`);
  }
  t.equal(rgError('RG_ERR_INTERNAL', 'x').status, 500, 'only the internal error is a 500');
  t.same(codes.filter((c) => ERRORS[c].status === 500), ['RG_ERR_INTERNAL']);
});

t.test('every code is raised somewhere in lib/ (no dead codes)', async (t) => {
  const text = sources('lib').map((p) => readFileSync(p, 'utf8')).join('\n');
  for (const code of codes) t.ok(text.includes(`'${code}'`), `${code} is used`);
});

t.test('README documents every code, and only registered ones', async (t) => {
  const readme = readFileSync('README.md', 'utf8');
  for (const code of codes) t.ok(readme.includes(`\`${code}\``), `${code} is in README.md`);
  for (const mentioned of new Set(readme.match(/RG_ERR_[A-Z_]+/g) ?? [])) t.ok(mentioned in ERRORS, `${mentioned} in README.md is registered`);
});
