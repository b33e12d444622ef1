/**
 * MCP over Streamable HTTP at the sim server's `/mcp`, stateful as the SDK's StreamableHTTPServerTransport runs it: an
 * initialize request (POST, no session) opens a session (its id in the `mcp-session-id` header) with its own McpServer;
 * later POSTs, the GET event stream and DELETE carry that header. An unknown session is a 404, a request that is neither
 * an initialize nor in a session a 400, as the SDK's own examples answer them.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { readBody, sendJson } from '../http';
import { createWorldMcpServer, type WorldCaller } from './worldServer';

export const MCP_PATH = '/mcp';

export interface McpHttpEndpoint {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Open sessions, for tests and the shutdown. */
  sessions(): number;
  close(): Promise<void>;
}

const rpcError = (res: ServerResponse, status: number, code: number, message: string) =>
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });

export function createMcpHttpEndpoint(call: WorldCaller): McpHttpEndpoint {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  return {
    sessions: () => sessions.size,
    async handle(req, res) {
      const sessionId = typeof req.headers['mcp-session-id'] === 'string' ? req.headers['mcp-session-id'] : undefined;
      let body: unknown;
      if (req.method === 'POST') {
        try {
          body = JSON.parse((await readBody(req)).toString('utf8'));
        } catch {
          return rpcError(res, 400, -32700, 'Parse error: the body is not JSON');
        }
      }
      const open = sessionId ? sessions.get(sessionId) : undefined;
      if (open) return open.handleRequest(req, res, body);
      if (sessionId) return rpcError(res, 404, -32001, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(body))
        return rpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await createWorldMcpServer(call, 'mcp-http').connect(transport);
      await transport.handleRequest(req, res, body);
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((t) => t.close().catch(() => undefined)));
    },
  };
}
