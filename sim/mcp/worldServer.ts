/**
 * The simulated tool world as an MCP server (the official SDK's McpServer): one tool per world tool, each taking its one
 * string argument and answering one text content item holding the fact as JSON (with `source` and `asOf`). An unknown
 * argument, or a failure set by failTools, is a tool error result (`isError: true`) whose text says what went wrong:
 * the MCP way to show an error to the model, not a protocol error.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { WORLD_TOOL_NAMES, WORLD_TOOLS, type SimToolCall, type WorldAnswer } from '../world/tools';

export const WORLD_MCP_SERVER_NAME = 'judgeflow-sim-world';
export const WORLD_MCP_SERVER_VERSION = '1.0.0';

/** Answers one call (name, arguments) for a transport: createWorldCaller's function. */
export type WorldCaller = (
  name: string,
  args: Record<string, unknown>,
  transport: SimToolCall['transport'],
) => WorldAnswer;

/** A new McpServer with the world's tools, answering through `call` (which applies failTools and logs the call). */
export function createWorldMcpServer(call: WorldCaller, transport: SimToolCall['transport']): McpServer {
  const server = new McpServer({ name: WORLD_MCP_SERVER_NAME, version: WORLD_MCP_SERVER_VERSION });
  for (const name of WORLD_TOOL_NAMES) {
    const tool = WORLD_TOOLS[name];
    server.registerTool(
      name,
      {
        title: name.replace(/^get_/, '').replace(/_/g, ' '),
        description: tool.description,
        inputSchema: { [tool.argument]: z.string().describe(tool.argumentDescription) },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async (args: Record<string, unknown>) => {
        const answer = call(name, args, transport);
        return answer.ok
          ? { content: [{ type: 'text' as const, text: JSON.stringify(answer.result) }] }
          : { content: [{ type: 'text' as const, text: answer.error }], isError: true };
      },
    );
  }
  return server;
}
