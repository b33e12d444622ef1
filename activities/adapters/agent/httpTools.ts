import { z } from 'zod';
import { expandEnv, headersSchema } from '../common';
import { getPath, parsePath } from '../http';
import type { ToolSpec } from './model';
import type { ToolResult } from './mcpTools';

/**
 * Tools declared in the config, for services without an MCP server: one HTTP request per call, its URL (and body) filled
 * from the call's arguments, the result read at `answerPath` of the JSON reply. A non-2xx status or an unreadable reply
 * is an error result the model is shown.
 */

export const httpToolSchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name: letters, digits, _ and -, at most 64')
      .describe('the tool name the model calls'),
    description: z.string().min(1).describe('what the tool does, as the model is told'),
    parameters: z
      .record(z.string(), z.unknown())
      .default({ type: 'object', properties: {} })
      .describe('JSON Schema of the arguments (an object schema), as the model is told'),
    url: z.string().min(1).describe('request URL; {name} is replaced by the URL-encoded argument of that name'),
    method: z.enum(['GET', 'POST']).default('GET').describe('HTTP method'),
    headers: headersSchema.describe('request headers; credentials as ${VAR}, resolved in the worker'),
    body: z.string().optional().describe('request body template (POST); {name} is replaced by the argument as JSON'),
    answerPath: z
      .string()
      .min(1)
      .optional()
      .describe('where the result is in the JSON reply (e.g. data); absent: the whole reply'),
    timeoutMs: z.number().int().min(100).default(30_000).describe('time one call may take'),
  })
  .strict()
  .superRefine((tool, ctx) => {
    if (tool.answerPath) {
      try {
        parsePath(tool.answerPath);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['answerPath'], message: (error as Error).message });
      }
    }
  });

export type HttpToolConfig = z.infer<typeof httpToolSchema>;

export function httpToolSpec(tool: HttpToolConfig): ToolSpec {
  return { name: tool.name, description: tool.description, inputSchema: tool.parameters };
}

const PLACEHOLDER = /\{([A-Za-z_][\w-]*)\}/g;

/** One call of a config-declared HTTP tool. */
export async function callHttpTool(
  tool: HttpToolConfig,
  args: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<ToolResult> {
  const asText = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
  const url = tool.url.replace(PLACEHOLDER, (_, name: string) => encodeURIComponent(asText(args[name])));
  const body = tool.body?.replace(PLACEHOLDER, (_, name: string) => JSON.stringify(args[name] ?? null));
  const headers = Object.fromEntries(
    Object.entries(tool.headers).map(([k, v]) => [k, expandEnv(v, env, `tool ${tool.name} header ${k}`)]),
  );
  const response = await fetch(url, {
    method: tool.method,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body } : {}),
    signal: AbortSignal.any([signal, AbortSignal.timeout(tool.timeoutMs)]),
  });
  const text = await response.text();
  if (!response.ok) return { text: `HTTP ${response.status}: ${text.slice(0, 500)}`, isError: true };
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    return { text: `the reply is not JSON: ${text.slice(0, 200)}`, isError: true };
  }
  const picked = tool.answerPath ? getPath(reply, tool.answerPath) : reply;
  if (picked === undefined)
    return { text: `the reply has nothing at ${tool.answerPath}: ${text.slice(0, 200)}`, isError: true };
  return { text: typeof picked === 'string' ? picked : JSON.stringify(picked), isError: false };
}
