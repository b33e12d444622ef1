/**
 * The world's tools as plain HTTP endpoints, for agent configs that declare HTTP tools instead of an MCP server:
 * `GET /tools/<tool>?<argument>=…` (or POST with a JSON body holding the argument) → `{"data": {…fact…}}`; an unknown
 * argument is a 404, a missing one a 400, a failTools failure a 503, each `{"error": {"message"}}`. Paths: /tools/price,
 * /tools/tvl, /tools/funding-rate, /tools/token-unlocks, /tools/holder-concentration.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from '../http';
import { WORLD_TOOL_NAMES, WORLD_TOOLS } from './tools';
import type { WorldCaller } from '../mcp/worldServer';

export const HTTP_TOOLS_PREFIX = '/tools/';

/** Answers a request under /tools/; false when the path names no tool (the caller answers 404 as for any unknown URL). */
export async function answerHttpTool(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  path: string,
  call: WorldCaller,
): Promise<boolean> {
  const name = WORLD_TOOL_NAMES.find((n) => path === `${HTTP_TOOLS_PREFIX}${WORLD_TOOLS[n].httpPath}`);
  if (!name || (req.method !== 'GET' && req.method !== 'POST')) return false;
  const argument = WORLD_TOOLS[name].argument;
  let args: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (req.method === 'POST') {
    try {
      const body = JSON.parse((await readBody(req)).toString('utf8') || '{}');
      args = { ...args, ...(body && typeof body === 'object' ? body : {}) };
    } catch {
      sendJson(res, 400, { error: { message: `POST ${path}: the body is not JSON; send {"${argument}": "…"}` } });
      return true;
    }
  }
  if (typeof args[argument] !== 'string' || args[argument] === '') {
    sendJson(res, 400, {
      error: {
        message: `${path} needs "${argument}" (${WORLD_TOOLS[name].argumentDescription}), e.g. ${path}?${argument}=${encodeURIComponent(WORLD_TOOLS[name].known[0])}`,
      },
    });
    return true;
  }
  const answer = call(name, { [argument]: args[argument] }, 'http');
  if (answer.ok) sendJson(res, 200, { data: answer.result });
  else sendJson(res, answer.simulated ? 503 : 404, { error: { message: answer.error } });
  return true;
}
