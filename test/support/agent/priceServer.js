// A real MCP server (the official SDK's McpServer) with one tool, get_price, for the agent adapter's tests.
// Run over stdio: `node test/support/agent/priceServer.js`; PRICE_LOG=<file> appends one JSON line per call;
// PRICE_FAIL=<symbol> makes that symbol an error result. Also exported, for Streamable HTTP inside a test.
const fs = require('node:fs');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

const PRICES = { BTC: 97000.5, ETH: 3400.25, SOL: 180.1 };

function priceServer(log = () => undefined, fail = '', delayMs = () => 0) {
  const server = new McpServer({ name: 'prices', version: '1.0.0' });
  server.registerTool(
    'get_price',
    {
      description: 'The spot price of a token in USD, with its source',
      inputSchema: { symbol: z.string().describe('ticker, e.g. BTC') },
    },
    async ({ symbol }) => {
      log({ tool: 'get_price', args: { symbol } });
      const wait = delayMs();
      if (wait) await new Promise((resolve) => setTimeout(resolve, wait));
      if (symbol === fail || !(symbol in PRICES))
        return { isError: true, content: [{ type: 'text', text: `unknown symbol ${symbol}` }] };
      return {
        content: [
          {
            type: 'text',
            text: JSON.stringify({
              symbol,
              price: PRICES[symbol],
              source: `https://prices.test/${symbol}`,
              asOf: '2026-11-30',
            }),
          },
        ],
      };
    },
  );
  return server;
}

module.exports = { priceServer, PRICES };

if (require.main === module) {
  const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
  const logFile = process.env.PRICE_LOG;
  const log = (entry) => logFile && fs.appendFileSync(logFile, `${JSON.stringify(entry)}\n`);
  priceServer(log, process.env.PRICE_FAIL ?? '').connect(new StdioServerTransport());
}
