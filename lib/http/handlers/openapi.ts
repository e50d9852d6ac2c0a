/** GET /v1/openapi.json: the OpenAPI 3.1 document of the served revision (built by ../openapi.ts). */
import type { Handler } from '../context.js';
import { openApiText } from '../openapi.js';
import { sendJson } from '../respond.js';

export const getOpenApi: Handler = async (ctx, req, res) => {
  sendJson(ctx, req, res, 200, openApiText(ctx.config.revision));
};
