/**
 * GET /v1/openapi.json: for each revision, the document lists exactly the served routes, and real
 * responses of every endpoint (successes, streamed rows frame by frame, and error bodies) validate
 * against it with ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1).
 */
import t from 'tap';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Revision } from '../../lib/config/config.js';
import { routesFor } from '../../lib/http/routes.js';
import { INFO_PATHS, json, rowsOf, type RawResponse } from '../support/fixture-tables.js';
import { startInProcess } from '../support/in-process.js';

type Json = { [key: string]: unknown };
type Operation = { responses: Record<string, { content?: Record<string, Json> }>; parameters?: { name: string; in: string }[]; requestBody?: unknown };

const TABLE = '/v1/instances/:instance/tables/:table';
const q = (v: unknown) => encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

for (const revision of [1, 2, 3] as Revision[]) {
  t.test(`revision ${revision}: the document and every endpoint's responses`, async (t) => {
    const h = await startInProcess({ revision, limits: { bodyBytes: 100_000, urlBytes: 4000 } });
    t.teardown(() => h.close());

    const docRes = await h.raw('GET', '/v1/openapi.json');
    t.equal(docRes.status, 200);
    t.equal(docRes.headers['content-type'], 'application/json');
    const doc = JSON.parse(docRes.body) as {
      openapi: string;
      info: Json;
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, Json> };
    };
    t.equal(doc.openapi, '3.1.0');
    t.match(doc.info.title, new RegExp(`revision ${revision}`));

    // HEAD is served wherever GET is.
    const served = routesFor(revision)
      .flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method]).map((m) => `${m} ${openApiPath(r.path)}`))
      .sort();
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    t.same(documented, served, 'the document lists exactly the routes of the served revision');
    for (const [path, ops] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(ops)) {
        t.same(
          op.parameters!.filter((p) => p.in === 'path').map((p) => p.name),
          names,
          `${method} ${path}: path parameters`,
        );
      }
    }

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema(doc, 'openapi.json');
    const compiled = new Map<string, ValidateFunction>();
    const validator = (ref: string): ValidateFunction => {
      let v = compiled.get(ref);
      if (!v) {
        v = ajv.compile({ $ref: `openapi.json#${ref}` });
        compiled.set(ref, v);
      }
      return v;
    };
    const validate = (ref: string, value: unknown, what: string) => {
      const v = validator(ref);
      t.ok(v(value), `${what} validates against ${ref}`, { errors: v.errors, value });
    };

    /** Every route must see a validated 200 and a validated error. */
    const seen = new Map<string, Set<string>>();
    const call = async (method: string, template: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<RawResponse> => {
      const res = await h.raw(method, path, body, body === undefined ? headers : { ...json, ...headers });
      const key = `${method} ${openApiPath(template)}`;
      const op = doc.paths[openApiPath(template)]?.[method.toLowerCase()];
      t.ok(op, `${key} is documented`);
      if (!op) return res;
      const status = String(res.status);
      const chosen = op.responses[status] !== undefined ? status : op.responses[`${status[0]}XX`] !== undefined ? `${status[0]}XX` : 'default';
      t.ok(chosen === status, `${key}: status ${status} is documented`);
      const media = op.responses[chosen]!.content!['application/json']!;
      const ref = `/paths/${pointer(openApiPath(template))}/${method.toLowerCase()}/responses/${chosen}/content/application~1json/schema`;
      t.equal(res.headers['content-type'], 'application/json', `${key} ${status}: content type`);
      if (media['x-rowgate-stream'] !== undefined && res.status === 200) {
        const rows = rowsOf(res.body);
        rows.forEach((row, i) => validate(ref, row, `${key} row ${i}`));
      } else {
        validate(ref, JSON.parse(res.body), `${key} ${status} (${path})`);
      }
      const kinds = seen.get(key) ?? new Set<string>();
      kinds.add(res.status === 200 ? 'ok' : 'error');
      seen.set(key, kinds);
      if (method === 'GET') await head(template, path, res);
      return res;
    };
    /** HEAD of every GET made: documented, the GET's status and headers, no body. */
    const head = async (template: string, path: string, got: RawResponse) => {
      const res = await h.raw('HEAD', path);
      const key = `HEAD ${openApiPath(template)}`;
      const op = doc.paths[openApiPath(template)]?.head;
      t.ok(op?.responses[String(res.status)], `${key}: status ${res.status} is documented`);
      t.equal(res.status, got.status, `${key} ${path.slice(0, 80)}: the GET's status`);
      t.equal(res.body, '', `${key}: no body`);
      // Transfer-Encoding describes a body; a HEAD has none to frame. x-request-id is new for every request.
      const comparable = (headers: RawResponse['headers']) =>
        Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'date' && name !== 'transfer-encoding' && name !== 'x-request-id'));
      t.same(comparable(res.headers), comparable(got.headers), `${key} ${path.slice(0, 80)}: the GET's headers`);
      const kinds = seen.get(key) ?? new Set<string>();
      kinds.add(res.status === 200 ? 'ok' : 'error');
      seen.set(key, kinds);
    };
    const expect = async (status: number, method: string, template: string, path: string, body?: string, headers?: Record<string, string>) => {
      const res = await call(method, template, path, body, headers);
      t.equal(res.status, status, `${method} ${path}: ${res.body.slice(0, 300)}`);
      return res;
    };

    const ROWS = '/v1/instances/default/tables/sample_table/rows';
    const PLAYERS = '/v1/instances/default/tables/players/rows';
    const eid = (c: (string | number)[]) =>
      revision === 3 ? JSON.stringify(c) : `[${c.map((x) => (typeof x === 'string' ? `'${x}'` : String(x))).join(', ')}]`;
    const bodyEid = (c: (string | number)[]) => (revision === 3 ? c : eid(c));
    const ws = revision === 1 ? {} : { writer_schema: 'string' };

    for (const path of INFO_PATHS) {
      const template = path.replace(/\/instances\/default/, '/instances/:instance').replace(/\/tables\/sample_table/, '/tables/:table');
      await expect(200, 'GET', template, path);
    }
    await expect(400, 'GET', '/v1', '/v1?unknown=1');
    await expect(400, 'GET', '/v1/version', '/v1/version?x');
    await expect(400, 'GET', '/v1/openapi.json', '/v1/openapi.json?revision=2');
    await expect(400, 'GET', '/v1/instances', '/v1/instances?a=%zz');
    await expect(404, 'GET', '/v1/instances/:instance', '/v1/instances/nope');
    await expect(404, 'GET', '/v1/instances/:instance/tables', '/v1/instances/nope/tables');
    await expect(404, 'GET', TABLE, '/v1/instances/default/tables/nope');

    // Writes: rows with every kind of cell, then the errors of the body.
    await expect(
      200,
      'POST',
      `${TABLE}/rows`,
      ROWS,
      JSON.stringify([
        {
          entityId: bodyEid([12345]),
          cells: {
            group_family: {
              string_qualifier: [
                { value: 'a\r\nb', timestamp: 1, ...ws },
                { value: 'newer', timestamp: 5 },
              ],
              long_qualifier: [{ value: 1000, timestamp: 1 }],
              union_qualifier: [{ value: 'u', timestamp: 1 }],
              inline_record: [{ value: { username: 'x', num_purchases: 3, nick: null }, timestamp: 2 }],
              counter: [{ value: 7 }],
            },
            strings: { 'q q': [{ value: 's', timestamp: 3 }] },
            longs: { n: [{ value: 9007199254740993, timestamp: 3 }] },
          },
        },
        { entityId: bodyEid([2345]), cells: { longs: { n: [{ value: 1, timestamp: 1 }] } } },
      ]).replace('9007199254740993.0', '9007199254740993'),
    );
    await expect(
      200,
      'POST',
      `${TABLE}/rows`,
      PLAYERS,
      JSON.stringify({
        entityId: bodyEid(['ann', 'x.org']),
        cells: { info: { email: [{ value: 'ann@x.org', timestamp: 1 }], logins: [{ value: { incr: 2 } }] } },
      }),
    );
    await expect(400, 'POST', `${TABLE}/rows`, ROWS, '{"entityId": [1], "cells": ');
    await expect(400, 'POST', `${TABLE}/rows`, ROWS, JSON.stringify({ entityId: bodyEid([1]), cells: { nofamily: { q: [{ value: 1 }] } } }));
    await expect(415, 'POST', `${TABLE}/rows`, ROWS, '{}', { 'content-type': 'text/plain' });
    await expect(413, 'POST', `${TABLE}/rows`, ROWS, JSON.stringify({ entityId: bodyEid([1]), cells: { strings: { q: [{ value: 'x'.repeat(200_000) }] } } }));
    await expect(404, 'POST', `${TABLE}/rows`, '/v1/instances/default/tables/nope/rows', '[]');

    // Reads: scans, point and bulk gets, wildcards; each streamed row validated.
    const scan = await expect(200, 'GET', `${TABLE}/rows`, `${ROWS}?versions=all&limit=-1`);
    t.equal(rowsOf(scan.body).length, 2);
    await expect(200, 'GET', `${TABLE}/rows`, `${ROWS}?eid=${q(eid([12345]))}&cols=group_family,strings&timerange=0..100`);
    await expect(200, 'GET', `${TABLE}/rows`, `${ROWS}?eid=${q(eid([424242]))}`);
    await expect(200, 'GET', `${TABLE}/rows`, `${ROWS}?eids=${q(JSON.stringify(revision === 3 ? [[12345], [2345], [12345]] : [eid([12345]), eid([2345])]))}`);
    await expect(200, 'GET', `${TABLE}/rows`, `${PLAYERS}?limit=10&versions=2`);
    if (revision !== 1) await expect(200, 'GET', `${TABLE}/rows`, `${PLAYERS}?eid=${q(revision === 3 ? '["ann", []]' : "['ann', []]")}`);
    await expect(400, 'GET', `${TABLE}/rows`, `${ROWS}?limit=-5`);
    await expect(400, 'GET', `${TABLE}/rows`, `${ROWS}?cols=nofamily`);
    await expect(400, 'GET', `${TABLE}/rows`, `${ROWS}?timerange=9..1`);
    await expect(400, 'GET', `${TABLE}/rows`, `${ROWS}?eid=${q('[not json')}`);
    await expect(404, 'GET', `${TABLE}/rows`, '/v1/instances/nope/tables/sample_table/rows');

    // Split points (beyond the interface, every revision).
    await expect(200, 'GET', `${TABLE}/splits`, '/v1/instances/default/tables/sample_table/splits?n=4');
    await expect(400, 'GET', `${TABLE}/splits`, '/v1/instances/default/tables/sample_table/splits?n=0');

    // Deletes.
    await expect(200, 'DELETE', `${TABLE}/rows`, `${ROWS}?eid=${q(eid([2345]))}&cols=longs`);
    await expect(400, 'DELETE', `${TABLE}/rows`, ROWS);
    await expect(400, 'DELETE', `${TABLE}/rows`, `${ROWS}?eid=${q(eid([1]))}&timestamp=yesterday`);

    if (revision !== 3) {
      const conv = await expect(200, 'GET', `${TABLE}/entityId`, `/v1/instances/default/tables/sample_table/entityId?eid=${q('[12345]')}`);
      await expect(400, 'GET', `${TABLE}/entityId`, '/v1/instances/default/tables/sample_table/entityId');
      await expect(400, 'GET', `${TABLE}/entityId`, `/v1/instances/default/tables/sample_table/entityId?eid=${q("['wrong', 'type']")}`);
      if (revision === 1) {
        const hex = (JSON.parse(conv.body) as { rowKey: string }).rowKey;
        await expect(200, 'GET', `${TABLE}/rows/:hexEntityId`, `${ROWS}/${hex}?versions=all`);
        const missing = await expect(200, 'GET', `${TABLE}/entityId`, `/v1/instances/default/tables/sample_table/entityId?eid=${q('[987654]')}`);
        await expect(200, 'GET', `${TABLE}/rows/:hexEntityId`, `${ROWS}/${(JSON.parse(missing.body) as { rowKey: string }).rowKey}`);
        await expect(400, 'GET', `${TABLE}/rows/:hexEntityId`, `${ROWS}/00000000000000000001`);
        await expect(400, 'GET', `${TABLE}/rows/:hexEntityId`, `${ROWS}/xyz`);
        await expect(
          200,
          'PUT',
          `${TABLE}/rows/:hexEntityId`,
          `${ROWS}/${hex}?timestamp=10&group_family:string_qualifier=${q('"put"')}&longs:m=${q('5')}&timestamp.longs:m=11`,
        );
        await expect(400, 'PUT', `${TABLE}/rows/:hexEntityId`, `${ROWS}/${hex}?group_family:string_qualifier=${q('"put"')}`);
        await expect(400, 'PUT', `${TABLE}/rows/:hexEntityId`, `${ROWS}/${hex}?timestamp=1&group_family:long_qualifier=${q('"not a long"')}`);
      }
    }

    // Errors outside any documented operation still carry the documented error body.
    const errorRef = '/components/schemas/Error';
    for (const [method, path, status] of [
      ['PUT', '/v1/instances', 405],
      ['GET', '/v1/nothing', 404],
      ['POST', '/v1/openapi.json', 405],
      ['GET', `/v1/${'x'.repeat(5000)}`, 414],
    ] as const) {
      const res = await h.raw(method, path);
      t.equal(res.status, status, `${method} ${path.slice(0, 40)}`);
      validate(errorRef, JSON.parse(res.body), `${method} ${path.slice(0, 40)} error body`);
    }

    for (const key of served) {
      t.same([...(seen.get(key) ?? [])].sort(), ['error', 'ok'], `${key}: a success and an error were validated`);
    }
  });
}

t.test("each operation lists the error codes of its own route, and GET /v1's resources name the document", async (t) => {
  const h = await startInProcess();
  t.teardown(() => h.close());
  const root = JSON.parse((await h.raw('GET', '/v1')).body) as { resources: string[] };
  t.ok(root.resources.includes('openapi.json'), 'GET /v1 names openapi.json');
  const doc = JSON.parse((await h.raw('GET', '/v1/openapi.json')).body) as {
    paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
  };
  for (const route of routesFor(3)) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    const op = doc.paths[path]?.[route.method.toLowerCase()];
    if (op === undefined) continue;
    for (const [status, response] of Object.entries(op.responses)) {
      if (!/^[45]\d\d$/.test(status)) continue;
      for (const code of response.description.match(/RG_ERR_\w+/g) ?? [])
        t.ok(route.errors.includes(code as never), `${route.method} ${route.path} ${status}: ${code} is one of its route's errors`);
    }
  }
  t.notMatch(doc.paths['/v1']!.get!.responses['400']?.description ?? '', /RG_ERR_BAD_LAYOUT/, 'GET /v1 does not list a layout error');
});
