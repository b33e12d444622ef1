import { z } from 'zod';
import { envNameSchema } from '../common';
import { AdapterError } from '../types';
import type { ToolSpec } from './model';

/**
 * Tools from MCP servers, through the official SDK's client: stdio (the server is a child process of the worker) or
 * Streamable HTTP. A server is connected on first use and kept for the worker's life; a connection that broke is made
 * again on the next call. Tool errors (`isError: true`) are results the model is shown; a transport failure is one too,
 * with its message.
 */

export const mcpServerSchema = z.union([
  z
    .object({
      name: z.string().min(1).describe('names the server in messages and reports'),
      command: z
        .string()
        .min(1)
        .describe('the program that runs the MCP server over stdio (a child process of the worker)'),
      args: z.array(z.string()).default([]).describe('its arguments'),
      env: z
        .record(z.string(), z.string())
        .default({})
        .describe("extra environment for it; values may reference the worker's variables as ${VAR}"),
      cwd: z.string().optional().describe('its working folder'),
    })
    .strict(),
  z
    .object({
      name: z.string().min(1).describe('names the server in messages and reports'),
      url: z.string().url().describe('the MCP endpoint, spoken to over Streamable HTTP'),
      headersFromEnv: z
        .record(z.string(), envNameSchema)
        .default({})
        .describe(
          'HTTP headers whose values are read from these environment variables in the worker (e.g. {Authorization: MCP_TOKEN}); never the values themselves',
        ),
    })
    .strict(),
]);

export type McpServerConfig = z.infer<typeof mcpServerSchema>;

export interface ToolResult {
  text: string;
  isError: boolean;
}

/** A connected MCP server's tools. */
export interface McpConnection {
  server: string;
  tools: ToolSpec[];
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
  close(): Promise<void>;
}

/** Connect to one server and list its tools. */
export async function connectMcp(
  config: McpServerConfig,
  env: NodeJS.ProcessEnv,
  expand: (template: string, where: string) => string,
): Promise<McpConnection> {
  // Loaded here: the SDK is needed only by a worker running an agent copilot.
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const client = new Client({ name: 'judgeflow', version: '1' });
  let transport;
  if ('command' in config) {
    const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const extra = Object.fromEntries(
      Object.entries(config.env).map(([k, v]) => [k, expand(v, `MCP server ${config.name} env ${k}`)]),
    );
    transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: { ...getDefaultEnvironment(), ...extra },
      cwd: config.cwd,
      stderr: 'ignore',
    });
  } else {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const headers: Record<string, string> = {};
    for (const [header, name] of Object.entries(config.headersFromEnv)) {
      const value = env[name];
      if (value === undefined)
        throw new AdapterError(
          'config',
          `MCP server ${config.name}: header ${header} is read from the environment variable ${name}, which is not set in this worker's environment`,
        );
      headers[header] = value;
    }
    transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } });
  }
  try {
    await client.connect(transport);
  } catch (error) {
    throw new AdapterError('network', `MCP server ${config.name}: could not connect (${(error as Error).message})`, {
      retryable: true,
    });
  }
  const tools: ToolSpec[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    for (const t of page.tools)
      tools.push({
        name: t.name,
        description: t.description ?? '',
        inputSchema: t.inputSchema as Record<string, unknown>,
      });
    cursor = page.nextCursor;
  } while (cursor);
  return {
    server: config.name,
    tools,
    async call(name, args, signal) {
      const result = await client.callTool({ name, arguments: args }, undefined, { signal });
      return { text: resultText(result), isError: result.isError === true };
    },
    close: () => client.close(),
  };
}

/** A tool result as the text the model is shown: its text items, other items as JSON; structured content when no text. */
function resultText(result: { content?: unknown; structuredContent?: unknown; toolResult?: unknown }): string {
  const items = Array.isArray(result.content) ? result.content : [];
  const parts = items.map((item: any) =>
    item?.type === 'text' && typeof item.text === 'string' ? item.text : JSON.stringify(item),
  );
  if (parts.length) return parts.join('\n');
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return result.toolResult === undefined ? '' : JSON.stringify(result.toolResult);
}
