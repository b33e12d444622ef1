import { startToolModel, type ToolModel } from './toolModel';
import { startMcpHttp, type McpHttpServer } from './mcpHttp';

/**
 * The tool-calling model fake and the MCP tool server, started once for a test file and closed after it: the agent
 * e2e files all need the pair. Read `fakes.model` / `fakes.tools` inside tests (they are set in beforeAll).
 */
export function agentFakesForFile(): { model: ToolModel; tools: McpHttpServer } {
  const fakes = {} as { model: ToolModel; tools: McpHttpServer };
  beforeAll(async () => {
    fakes.model = await startToolModel();
    fakes.tools = await startMcpHttp();
  });
  afterAll(async () => {
    await fakes.model?.close();
    await fakes.tools?.close();
  });
  return fakes;
}
