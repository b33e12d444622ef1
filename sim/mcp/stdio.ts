/**
 * The simulated tool world as an MCP server over stdio, for agent configs that start their MCP server as a command:
 *
 *   node dist/sim/mcp/stdio.js        (or: npx tsx sim/mcp/stdio.ts)
 *
 * Environment:
 *   JUDGEFLOW_SIM_TOOL_LOG=<file>     append one JSON line per tool call, {tool, args, at, transport: "stdio", ok, error?},
 *                                     so a test can count the calls a run made (written before the answer is sent)
 *   JUDGEFLOW_SIM_FAIL_TOOLS=<json>   tools made to fail, e.g. {"get_price": "always", "get_tvl": 2} (the first 2 calls)
 *
 * stdout carries the protocol only; problems go to stderr.
 */
import { appendFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createWorldCaller, parseFailTools, type FailTools, type SimToolCall } from '../world/tools';
import { createWorldMcpServer } from './worldServer';

export const TOOL_LOG_ENV = 'JUDGEFLOW_SIM_TOOL_LOG';
export const FAIL_TOOLS_ENV = 'JUDGEFLOW_SIM_FAIL_TOOLS';

export async function runStdioWorldServer(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const failTools: FailTools = env[FAIL_TOOLS_ENV] ? parseFailTools(env[FAIL_TOOLS_ENV]!, FAIL_TOOLS_ENV) : {};
  const logFile = env[TOOL_LOG_ENV];
  const record = (call: SimToolCall) => {
    if (logFile) appendFileSync(logFile, `${JSON.stringify(call)}\n`);
  };
  const server = createWorldMcpServer(createWorldCaller(failTools, record), 'stdio');
  await server.connect(new StdioServerTransport());
}

if (require.main === module) {
  runStdioWorldServer().catch((error: unknown) => {
    process.stderr.write(`judgeflow sim MCP (stdio): ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  });
}
