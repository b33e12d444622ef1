/**
 * The tool world of one sim server: its MCP endpoint (/mcp), its plain HTTP tools (/tools/…) and the log of every tool
 * call they served (GET /_sim/tool-calls), with failTools counted per server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../http';
import { createMcpHttpEndpoint, MCP_PATH } from '../mcp/http';
import { answerHttpTool, HTTP_TOOLS_PREFIX } from './httpTools';
import { createWorldCaller, type FailTools, type SimToolCall } from './tools';

export const TOOL_CALLS_PATH = '/_sim/tool-calls';

export interface SimToolWorld {
  calls: SimToolCall[];
  /** Answers the request when it is the tool world's (true), else leaves it to the rest of the server (false). */
  route(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * `requiredHeaders`: headers every tool request (/mcp, /tools/…) must carry with exactly these values (a 401 otherwise),
 * so a test sees that an agent's MCP/HTTP tool credentials reach the service.
 */
export function createSimToolWorld(
  failTools: FailTools = {},
  requiredHeaders: Record<string, string> = {},
): SimToolWorld {
  const calls: SimToolCall[] = [];
  const call = createWorldCaller(failTools, (entry) => calls.push(entry));
  const mcp = createMcpHttpEndpoint(call);
  return {
    calls,
    async route(req, res, url, path) {
      const toolPath = path === MCP_PATH || path.startsWith(HTTP_TOOLS_PREFIX);
      const missing = Object.keys(requiredHeaders).find(
        (name) => req.headers[name.toLowerCase()] !== requiredHeaders[name],
      );
      if (toolPath && missing)
        return (
          sendJson(res, 401, {
            error: { message: `missing or wrong ${missing} header (the simulator's tools require it)` },
          }),
          true
        );
      if (path === MCP_PATH) return mcp.handle(req, res).then(() => true);
      if (req.method === 'GET' && path === TOOL_CALLS_PATH) return (sendJson(res, 200, calls), true);
      if (path.startsWith(HTTP_TOOLS_PREFIX)) return answerHttpTool(req, res, url, path, call);
      return false;
    },
    close: () => mcp.close(),
  };
}
