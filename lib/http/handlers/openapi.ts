/** GET /v1/openapi.json: the OpenAPI 3.1 document of the served revision (built by ../openapi.ts). */
import type { Handler } from '../context.js';
import { openApiText } from '../openapi.js';
import { allowOnly } from '../query.js';
import { sendJson } from '../respond.js';

const NONE = new Set<string>();

export const getOpenApi: Handler = async (ctx, req, res, _p, query) => {
  allowOnly(query, NONE, ctx.config.revision);
  sendJson(ctx, req, res, 200, openApiText(ctx.config.revision));
};
