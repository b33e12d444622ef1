/**
 * The simulated world's tools, independent of transport: what each tool is called, the one argument it takes, and its
 * answer from the fixtures. The MCP server (sim/mcp/), the plain HTTP endpoints (sim/world/httpTools.ts) and the
 * tool-calling copilot model (sim/agentModel.ts) all read this table, so every path gives the same facts.
 */
import { FUNDING, HOLDERS, PRICES, PROTOCOL_ALIASES, TOKEN_NAMES, TVL, UNLOCKS } from './fixtures';

export const WORLD_TOOL_NAMES = [
  'get_price',
  'get_tvl',
  'get_funding_rate',
  'get_token_unlocks',
  'get_holder_concentration',
] as const;
export type WorldToolName = (typeof WORLD_TOOL_NAMES)[number];

export interface WorldTool {
  name: WorldToolName;
  description: string;
  /** The tool's single argument: `symbol`, `protocol` or `token`. */
  argument: 'symbol' | 'protocol' | 'token';
  argumentDescription: string;
  /** The plain HTTP endpoint answering it: GET /tools/<httpPath>?<argument>=… */
  httpPath: string;
  /** Every value the argument may name (in the fixtures' spelling). */
  known: readonly string[];
  lookup(value: string): object | undefined;
}

const symbolOf = (value: string): string => {
  const cleaned = value.trim().replace(/^\$/, '');
  return TOKEN_NAMES[cleaned.toLowerCase()] ?? cleaned.toUpperCase();
};
const protocolKey = (value: string): string => value.toLowerCase().replace(/[^a-z0-9]/g, '');
const protocolOf = (value: string): string | undefined => {
  const key = protocolKey(value);
  return TVL.find((f) => protocolKey(f.protocol) === key)?.protocol ?? PROTOCOL_ALIASES[key];
};

export const WORLD_TOOLS: Readonly<Record<WorldToolName, WorldTool>> = {
  get_price: {
    name: 'get_price',
    description:
      'Spot price in USD of a crypto asset, with its change over the last 24 hours and its 24-hour trading volume.',
    argument: 'symbol',
    argumentDescription: 'ticker symbol, e.g. BTC',
    httpPath: 'price',
    known: PRICES.map((f) => f.symbol),
    lookup: (value) => PRICES.find((f) => f.symbol === symbolOf(value)),
  },
  get_tvl: {
    name: 'get_tvl',
    description: 'Total value locked (USD) in a DeFi protocol, with its change over 7 days.',
    argument: 'protocol',
    argumentDescription: 'protocol name, e.g. Aave',
    httpPath: 'tvl',
    known: TVL.map((f) => f.protocol),
    lookup: (value) => TVL.find((f) => f.protocol === protocolOf(value)),
  },
  get_funding_rate: {
    name: 'get_funding_rate',
    description:
      'Perpetual futures funding rate of an asset (percent per 8 hours, open-interest weighted across venues) and its open interest in USD.',
    argument: 'symbol',
    argumentDescription: 'ticker symbol, e.g. ETH',
    httpPath: 'funding-rate',
    known: FUNDING.map((f) => f.symbol),
    lookup: (value) => FUNDING.find((f) => f.symbol === symbolOf(value)),
  },
  get_token_unlocks: {
    name: 'get_token_unlocks',
    description: "A token's scheduled unlocks (date, amount, share of circulating supply, recipient), soonest first.",
    argument: 'token',
    argumentDescription: 'token symbol, e.g. ARB',
    httpPath: 'token-unlocks',
    known: UNLOCKS.map((f) => f.token),
    lookup: (value) => UNLOCKS.find((f) => f.token === symbolOf(value)),
  },
  get_holder_concentration: {
    name: 'get_holder_concentration',
    description: "Share of a token's supply held by its ten largest addresses (percent), and its number of holders.",
    argument: 'token',
    argumentDescription: 'token symbol, e.g. OP',
    httpPath: 'holder-concentration',
    known: HOLDERS.map((f) => f.token),
    lookup: (value) => HOLDERS.find((f) => f.token === symbolOf(value)),
  },
};

/** A tool's answer; `simulated` marks an error made by failTools rather than by the call's argument. */
export type WorldAnswer = { ok: true; result: object } | { ok: false; error: string; simulated?: true };

/** One call of a world tool: its fact, or an error saying what was wrong and what the world knows. */
export function callWorldTool(name: string, args: Record<string, unknown>): WorldAnswer {
  const tool = WORLD_TOOLS[name as WorldToolName];
  if (!tool)
    return { ok: false, error: `unknown tool "${name}"; the simulated world has ${WORLD_TOOL_NAMES.join(', ')}` };
  const value = args?.[tool.argument];
  if (typeof value !== 'string' || value.trim() === '')
    return { ok: false, error: `${name} needs a string argument "${tool.argument}" (${tool.argumentDescription})` };
  const result = tool.lookup(value);
  if (!result)
    return {
      ok: false,
      error: `${name}: unknown ${tool.argument} "${value}"; the simulated world knows ${tool.known.join(', ')}`,
    };
  return { ok: true, result };
}

/** One tool call served by the simulator, as GET /_sim/tool-calls and JUDGEFLOW_SIM_TOOL_LOG record it. */
export interface SimToolCall {
  tool: string;
  args: Record<string, unknown>;
  at: number;
  transport: 'mcp-http' | 'stdio' | 'http';
  /** False when it answered an error (unknown argument, or a failure set by failTools). */
  ok: boolean;
  error?: string;
}

/**
 * Tools made to fail, by name: 'always', or a count n (the first n calls fail, later ones succeed: a transient outage).
 * Shared by the sim server's option `failTools` and the stdio server's env JUDGEFLOW_SIM_FAIL_TOOLS.
 */
export type FailTools = Record<string, 'always' | number>;

/** Answers world tool calls, applying failTools and recording each call (one per server: the counts are its own). */
export function createWorldCaller(failTools: FailTools = {}, record: (call: SimToolCall) => void = () => {}) {
  const calls = new Map<string, number>();
  return (name: string, args: Record<string, unknown>, transport: SimToolCall['transport']): WorldAnswer => {
    const seen = (calls.get(name) ?? 0) + 1;
    calls.set(name, seen);
    const rule = failTools[name];
    const failed = rule === 'always' || (typeof rule === 'number' && seen <= rule);
    const answer: WorldAnswer = failed
      ? { ok: false, error: `${name} is unavailable (simulated failure, failTools)`, simulated: true }
      : callWorldTool(name, args);
    record({
      tool: name,
      args,
      at: Date.now(),
      transport,
      ok: answer.ok,
      ...(answer.ok ? {} : { error: answer.error }),
    });
    return answer;
  };
}

/** Parse failTools from text (the stdio server's env, the CLI's --fail-tool): what is wrong, in words, when it is bad. */
export function parseFailTools(text: string, where: string): FailTools {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${where}: not JSON; expected e.g. {"get_price": "always", "get_tvl": 2}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`${where}: expected an object of tool name → "always" or a count`);
  for (const [tool, rule] of Object.entries(parsed)) {
    if (!(WORLD_TOOL_NAMES as readonly string[]).includes(tool))
      throw new Error(`${where}: unknown tool "${tool}"; the simulated world has ${WORLD_TOOL_NAMES.join(', ')}`);
    if (rule !== 'always' && !(Number.isInteger(rule) && (rule as number) >= 0))
      throw new Error(
        `${where}: ${tool} must be "always" or a whole number of calls to fail, got ${JSON.stringify(rule)}`,
      );
  }
  return parsed as FailTools;
}
