/**
 * GET /v1/openapi.json: the OpenAPI 3.1 document of the served revision. The server builds it from
 * its route table (../openapi.ts) and hands it over in the context: this module knows neither.
 */
import type { Handler } from '../context.js';
import { sendJson } from '../respond.js';

export const getOpenApi: Handler = async (ctx, req, res) => {
  sendJson(ctx, req, res, 200, ctx.openApi());
};
