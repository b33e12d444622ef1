import path from 'node:path';
import { loadRunConfig } from '../../client/config';
import { REPO } from '../support/harness';

/** examples/agent.yaml loads: two agent configurations, one in each wire format, on one world server, recording it. */
test('examples/agent.yaml: two agent copilots (Chat Completions and Messages API) recording one world from one MCP server', () => {
  const warnings: string[] = [];
  const config = loadRunConfig(path.join(REPO, 'examples', 'agent.yaml'), (m) => warnings.push(m));
  const agents = config.copilots as Array<Record<string, any>>;
  expect(agents.map((c) => [c.name, c.type, c.provider ?? 'inferred', c.model])).toEqual([
    ['AgentChat', 'agent', 'inferred', 'sim-agent'],
    ['AgentMessages', 'agent', 'anthropic', 'sim-agent'],
  ]);
  expect(new Set(agents.map((c) => JSON.stringify(c.tools)))).toEqual(
    new Set([
      JSON.stringify({
        mcp: [{ name: 'world', url: 'http://127.0.0.1:8000/mcp', headersFromEnv: {} }],
        http: [],
        mode: 'record',
        onMissing: 'fail',
      }),
    ]),
  );
  expect(agents[0].system).not.toBe(agents[1].system);
});
