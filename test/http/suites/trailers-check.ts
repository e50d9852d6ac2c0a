/**
 * Paging a table through the scan trailers, as a client that reads them would: each page's
 * X-Rowgate-Rows and X-Rowgate-Next-Start, and the pages joined equal to one full scan.
 */
import { request } from 'node:http';
import type { Test } from 'tap';

export interface TrailedResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly trailers: Record<string, string | undefined>;
}

export function getWithTrailers(base: string, path: string, headers: Record<string, string> = {}): Promise<TrailedResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: 'GET', path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), trailers: res.trailers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Pages through `rowsPath` `pageSize` rows at a time by the next-start trailer; returns the pages' bodies joined. */
export async function pageThrough(t: Test, base: string, rowsPath: string, pageSize: number, startParam: string, expectedRows: number): Promise<string> {
  let joined = '';
  let next: string | undefined;
  let seen = 0;
  for (let page = 0; page <= expectedRows / pageSize + 1; page++) {
    const q = `limit=${pageSize}${next === undefined ? '' : `&${startParam}=${encodeURIComponent(next)}`}`;
    const res = await getWithTrailers(base, `${rowsPath}?${q}`);
    t.equal(res.status, 200);
    const rows = res.body === '' ? 0 : res.body.split('\r\n').length - 1;
    t.equal(res.trailers['x-rowgate-rows'], String(rows), `page ${page}: the rows trailer counts the ${rows} rows sent`);
    joined += res.body;
    seen += rows;
    next = res.trailers['x-rowgate-next-start'];
    if (seen < expectedRows) t.ok(next !== undefined && rows === pageSize, `page ${page}: a full page names the next one`);
    if (next === undefined) break;
  }
  t.equal(seen, expectedRows, 'every row paged through');
  t.equal(next, undefined, 'the last page names no next page');
  return joined;
}
