import http from 'node:http';
import type { AddressInfo } from 'node:net';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { priceServer } = require('./priceServer.js');

export interface McpHttpServer {
  url: string;
  /** Every tool call served, in order. */
  calls: Array<{ symbol: string }>;
  /** Held before each tool answers (to kill a worker while a call is in flight). */
  delayMs: number;
  close(): Promise<void>;
}

/** The test price server (the SDK's McpServer) over the SDK's Streamable HTTP server transport, stateless, on a local port. */
export async function startMcpHttp(): Promise<McpHttpServer> {
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const state: McpHttpServer = { url: '', calls: [], delayMs: 0, close: async () => undefined };
  const server = http.createServer(async (req, res) => {
    const mcp = priceServer(
      (entry: { args: { symbol: string } }) => state.calls.push(entry.args),
      '',
      () => state.delayMs,
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  state.close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return state;
}
