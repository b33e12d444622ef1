/**
 * The simulator's tool-calling copilot models, `sim-agent` and `sim-agent-hallucinating`, on the OpenAI Chat
 * Completions endpoint (`tools` / `tool_calls` / role `tool`) and on the Anthropic Messages endpoint (`tools` /
 * `tool_use` / `tool_result`). Deterministic, and a function of the request alone (the conversation so far), as a real
 * model is:
 *
 * 1. First turn after the question: one call per (entity, figure) the question asks about, all in one assistant turn
 *    (at most 4; one per turn when parallel calls are switched off). Entities are the world's tokens (by ticker or
 *    name) and protocols; the figures asked for come from words of the question (funding, unlock, holder…; a price when
 *    none is named). A protocol gets its TVL.
 * 2. Next turn: at most one follow-up call, chosen from the first successful result so far (price → funding rate of the same
 *    asset and back, TVL → price of the protocol's token, unlocks ↔ holder concentration).
 * 3. Then the final answer: one line per tool result quoting its figures exactly as the tool wrote them, each citing
 *    the result's `source`; a failed call is named without a figure. `sim-agent-hallucinating` adds one line with a
 *    figure no tool returned (HALLUCINATED_FIGURE), for the hallucination check to catch.
 *
 * Tools are matched by what they are, not their exact name: an offered tool whose name (or, failing that, description)
 * says price / tvl / funding / unlock / holder is that world tool, so MCP tools under a server prefix and config-declared
 * HTTP tools are called alike; its argument is the schema's symbol / token / protocol property (else its only one).
 * With no entity, or no fitting tool, it answers without calling one. Answers avoid the sentence shape of
 * sim/groundingJudge.ts's numeric claims and state no number besides the tools' own, so that judge reads every figure.
 */
import { createHash } from 'node:crypto';
import { PRICES, TOKEN_NAMES, TVL, UNLOCKS } from './world/fixtures';
import { WORLD_TOOL_NAMES, type WorldToolName } from './world/tools';
import { textOf, type SimProfile } from './profiles/types';

/** The figure sim-agent-hallucinating states that no tool returned: recognisable, and in no fixture. */
export const HALLUCINATED_FIGURE = '37.5%';
export const AGENT_MODELS = ['sim-agent', 'sim-agent-hallucinating'] as const;
const MAX_FIRST_CALLS = 4;
/** A conversation longer than this many tool rounds since the question is answered, whatever is pending. */
const MAX_ROUNDS = 8;

export function isAgentModel(model: string): boolean {
  const base = model.replace(/^fault-[a-z0-9-]+:/, '');
  return base === 'sim-agent' || base.startsWith('sim-agent-');
}
const isHallucinating = (model: string) => /hallucinating/.test(model);

export interface OfferedTool {
  name: string;
  description: string;
  parameters: any;
}
export interface PastCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The tool result's text; undefined when the conversation holds none for this call. */
  result: string | undefined;
  isError: boolean;
}
export interface AgentState {
  question: string;
  /** Tool rounds since the question: each the calls of one assistant turn, with their results. */
  rounds: PastCall[][];
  tools: OfferedTool[];
  parallel: boolean;
  /** False when the request forbids tool calls (tool_choice none): answer from what the rounds hold. */
  mayCallTools: boolean;
  hallucinating: boolean;
}
export interface PlannedCall {
  name: string;
  args: Record<string, string>;
}
export type AgentStep = { kind: 'calls'; calls: PlannedCall[]; preamble: string } | { kind: 'answer'; text: string };

type Entity = { kind: 'token' | 'protocol'; id: string; at: number };

const WORLD_TOKENS = UNLOCKS.map((f) => f.token);
const TOKEN_PROTOCOL = new Map(TVL.filter((f) => f.token).map((f) => [f.token as string, f.protocol]));
/** How a question names a protocol: case-insensitive, except words that are also plain English (yield curve, market maker). */
const PROTOCOL_PATTERNS: Array<[RegExp, string]> = [
  [/\baave\b/gi, 'Aave'],
  [/\buniswap\b/gi, 'Uniswap'],
  [/\blido\b/gi, 'Lido'],
  [/\bmakerdao\b|\bMaker\b/gi, 'MakerDAO'],
  [/\bCurve\b/g, 'Curve'],
  [/\beigenlayer\b/gi, 'EigenLayer'],
];

/** The world's tokens and protocols a question names, in the order it names them (each once). */
export function entitiesOf(question: string): Entity[] {
  const found: Entity[] = [];
  const asksTvl = /\btvl\b|total value locked|deposits/i.test(question);
  for (const token of WORLD_TOKENS) {
    for (const m of question.matchAll(new RegExp(`(?<![A-Za-z0-9])\\$?${token}(?![A-Za-z0-9])`, 'g')))
      found.push({ kind: 'token', id: token, at: m.index! });
  }
  for (const [name, token] of Object.entries(TOKEN_NAMES)) {
    for (const m of question.matchAll(new RegExp(`\\b${name}\\b`, 'gi')))
      found.push({ kind: 'token', id: token, at: m.index! });
  }
  for (const [pattern, protocol] of PROTOCOL_PATTERNS) {
    for (const m of question.matchAll(pattern)) {
      // An all-capitals AAVE or UNI is the token, unless the question asks for TVL.
      if (m[0] === m[0].toUpperCase() && WORLD_TOKENS.includes(m[0]) && !asksTvl) continue;
      found.push({ kind: 'protocol', id: protocol, at: m.index! });
    }
  }
  if (asksTvl) {
    // "AAVE TVL": the ticker stands for its protocol too.
    for (const e of [...found])
      if (e.kind === 'token' && TOKEN_PROTOCOL.has(e.id))
        found.push({ kind: 'protocol', id: TOKEN_PROTOCOL.get(e.id)!, at: e.at });
  }
  const seen = new Set<string>();
  return found
    .sort((a, b) => a.at - b.at)
    .filter((e) => !seen.has(`${e.kind}:${e.id}`) && Boolean(seen.add(`${e.kind}:${e.id}`)));
}

/** The token figures a question asks for, in a fixed order; a price when it names none. */
function figuresAsked(question: string): WorldToolName[] {
  const asked: WorldToolName[] = [];
  if (/price|trad(e|ing)|worth|valu|cost|rall|dump|pump|buy|sell|overbought|oversold/i.test(question))
    asked.push('get_price');
  if (/funding|perp|leverag|open interest|basis/i.test(question)) asked.push('get_funding_rate');
  if (/unlock|vesting|\bvest|emission|cliff|dilution/i.test(question)) asked.push('get_token_unlocks');
  if (/holder|concentrat|whale|distribution|top.?10|decentrali/i.test(question)) asked.push('get_holder_concentration');
  return asked.length ? asked : ['get_price'];
}

const TOOL_WORDS: Array<[RegExp, WorldToolName]> = [
  [/funding/i, 'get_funding_rate'],
  [/unlock|vesting/i, 'get_token_unlocks'],
  [/holder|concentration/i, 'get_holder_concentration'],
  [/tvl|value.?locked/i, 'get_tvl'],
  [/price|quote/i, 'get_price'],
];

/** Which world tool an offered tool is: by its name, else by its description. */
export function worldToolOf(tool: OfferedTool): WorldToolName | undefined {
  if ((WORLD_TOOL_NAMES as readonly string[]).includes(tool.name)) return tool.name as WorldToolName;
  for (const text of [tool.name, tool.description]) {
    const hit = TOOL_WORDS.find(([pattern]) => pattern.test(text ?? ''));
    if (hit) return hit[1];
  }
  return undefined;
}

/** The argument an offered tool takes the entity in: its schema's symbol/token/protocol-like property, else its only one. */
function argumentOf(tool: OfferedTool): string {
  const properties = Object.keys(tool.parameters?.properties ?? {});
  const preferred = ['symbol', 'token', 'protocol', 'asset', 'ticker', 'coin', 'slug', 'id', 'name'];
  return (
    preferred.find((p) => properties.includes(p)) ??
    (tool.parameters?.required?.[0] as string | undefined) ??
    properties[0] ??
    'symbol'
  );
}

const callKey = (tool: string, args: Record<string, unknown>) =>
  `${tool}\u0000${JSON.stringify(Object.values(args).map(String))}`;

/** The calls the question asks for (world tool, entity), mapped onto the tools offered; at most MAX_FIRST_CALLS. */
function plannedCalls(question: string, tools: OfferedTool[]): PlannedCall[] {
  const offered = new Map<WorldToolName, OfferedTool>();
  for (const tool of tools) {
    const world = worldToolOf(tool);
    if (world && !offered.has(world)) offered.set(world, tool);
  }
  const figures = figuresAsked(question);
  const calls: PlannedCall[] = [];
  for (const entity of entitiesOf(question)) {
    for (const world of entity.kind === 'protocol' ? (['get_tvl'] as const) : figures) {
      const tool = offered.get(world);
      if (tool) calls.push({ name: tool.name, args: { [argumentOf(tool)]: entity.id } });
    }
  }
  const seen = new Set<string>();
  return calls
    .filter((c) => !seen.has(callKey(c.name, c.args)) && Boolean(seen.add(callKey(c.name, c.args))))
    .slice(0, MAX_FIRST_CALLS);
}

/** A tool result's data: the JSON object it holds (a `{data: …}` envelope opened), or undefined for an error or non-JSON. */
export function resultData(call: PastCall): any {
  if (call.isError || call.result === undefined) return undefined;
  let parsed: any;
  try {
    parsed = JSON.parse(call.result);
  } catch {
    return undefined;
  }
  if (
    parsed &&
    typeof parsed === 'object' &&
    !Array.isArray(parsed) &&
    'data' in parsed &&
    Object.keys(parsed).length <= 2
  )
    parsed = parsed.data;
  if (
    parsed === null ||
    parsed === undefined ||
    (typeof parsed === 'object' && 'error' in parsed && !('source' in parsed))
  )
    return undefined;
  return parsed;
}

/** The one follow-up call a successful result suggests (see the file's comment), if its tool is offered. */
function followUp(rounds: PastCall[][], tools: OfferedTool[]): PlannedCall | undefined {
  const called = new Set(rounds.flat().map((c) => callKey(c.name, c.args)));
  const byWorld = (world: WorldToolName) => tools.find((t) => worldToolOf(t) === world);
  for (const call of rounds.flat()) {
    const data = resultData(call);
    if (!data || typeof data !== 'object') continue;
    const world = worldToolOfCall(call.name, tools);
    const entity = String(Object.values(call.args)[0] ?? '');
    const next: [WorldToolName, string] | undefined =
      world === 'get_price'
        ? ['get_funding_rate', entity]
        : world === 'get_funding_rate'
          ? ['get_price', entity]
          : world === 'get_tvl' && typeof data.token === 'string'
            ? ['get_price', data.token]
            : world === 'get_token_unlocks'
              ? ['get_holder_concentration', entity]
              : world === 'get_holder_concentration'
                ? ['get_token_unlocks', entity]
                : undefined;
    const tool = next && byWorld(next[0]);
    if (!tool) continue;
    const candidate = { name: tool.name, args: { [argumentOf(tool)]: next![1] } };
    if (!called.has(callKey(candidate.name, candidate.args))) return candidate;
  }
  return undefined;
}

/** Which world tool a call made: by the offered tool of that name (its description too), else by the name alone. */
function worldToolOfCall(name: string, tools: OfferedTool[]): WorldToolName | undefined {
  return worldToolOf(tools.find((t) => t.name === name) ?? { name, description: '', parameters: {} });
}

/** The model's next step in a conversation: tool calls, or the final answer. */
export function agentStep(state: AgentState): AgentStep {
  const { question, rounds, tools } = state;
  if (state.mayCallTools && tools.length > 0 && rounds.length < MAX_ROUNDS) {
    const called = new Set(rounds.flat().map((c) => callKey(c.name, c.args)));
    const planned = plannedCalls(question, tools);
    const pending = planned.filter((c) => !called.has(callKey(c.name, c.args)));
    const plannedKeys = new Set(planned.map((c) => callKey(c.name, c.args)));
    const hadFollowUp = rounds.flat().some((c) => !plannedKeys.has(callKey(c.name, c.args)));
    const next =
      pending.length > 0
        ? state.parallel
          ? pending
          : pending.slice(0, 1)
        : hadFollowUp || rounds.length === 0
          ? []
          : [followUp(rounds, tools)].filter((c): c is PlannedCall => c !== undefined);
    if (next.length > 0)
      return {
        kind: 'calls',
        calls: next,
        preamble: `Looking up ${next.map((c) => `${c.name} for ${Object.values(c.args)[0]}`).join(', ')}.`,
      };
  }
  return { kind: 'answer', text: finalAnswer(state) };
}

const signed = (change: number, over: string) =>
  change < 0 ? `down ${-change} percent ${over}` : `up ${change} percent ${over}`;
const cite = (data: any) => (typeof data?.source === 'string' ? ` (source: ${data.source})` : '');

/** One answer line for a successful call: the figures as the tool wrote them, with the result's source; by the data's shape. */
function factLine(call: PastCall, data: any): string {
  const subject = String(Object.values(call.args)[0] ?? '');
  if (typeof data !== 'object') return `${call.name} for ${subject} returned ${String(data)}.`;
  if ('price' in data)
    return `${data.symbol ?? subject} trades at ${data.price} USD, ${signed(data.change24hPct, 'over the last day')}, on a daily volume of ${data.volume24hUsd} USD${cite(data)}.`;
  if ('tvlUsd' in data)
    return `${data.protocol ?? subject} holds ${data.tvlUsd} USD of total value locked, ${signed(data.change7dPct, 'over seven days')}${cite(data)}.`;
  if ('fundingRate8hPct' in data)
    return `${data.symbol ?? subject} perpetual funding runs at ${data.fundingRate8hPct} percent per eight hours, on ${data.openInterestUsd} USD of open interest${cite(data)}.`;
  if (Array.isArray(data.unlocks)) {
    const token = data.token ?? subject;
    if (data.unlocks.length === 0) return `No ${token} unlocks are scheduled${cite(data)}.`;
    const next = data.unlocks[0];
    const more = data.unlocks.length > 1 ? ', with further unlocks scheduled after it' : '';
    return `Next ${token} unlock: ${next.amount} tokens on ${next.date} to ${next.recipient}, ${next.pctOfCirculating} percent of circulating supply${more}${cite(data)}.`;
  }
  if ('top10SharePct' in data)
    return `${data.token ?? subject}'s ten largest holders own ${data.top10SharePct} percent of supply, across ${data.holders} holders${cite(data)}.`;
  const figures = Object.entries(data)
    .filter(([, v]) => typeof v === 'number' || typeof v === 'string')
    .filter(([k]) => k !== 'source' && k !== 'asOf');
  return `${call.name} for ${subject} reports ${figures.map(([k, v]) => `${k} ${v}`).join(', ')}${cite(data)}.`;
}

const COVERAGE = `prices, funding rates, token unlocks and holder concentration of ${WORLD_TOKENS.join(', ')}, and TVL of ${TVL.map((f) => f.protocol).join(', ')}`;

function finalAnswer(state: AgentState): string {
  const calls = state.rounds.flat();
  const entities = entitiesOf(state.question);
  const subject = entities[0]?.id ?? PRICES[0].symbol;
  const invented = state.hallucinating
    ? [`- ${subject} also saw a ${HALLUCINATED_FIGURE} week-on-week rise in active addresses.`]
    : [];
  if (calls.length === 0) {
    const why =
      entities.length === 0
        ? `None of my tools covers what this question names (they cover ${COVERAGE})`
        : `I have no tool for the figures this question asks about ${entities.map((e) => e.id).join(', ')}`;
    return [`${why}, so I cannot quote current figures and give no numbers.`, ...invented].join('\n');
  }
  const lines = calls.map((call) => {
    const data = resultData(call);
    if (data !== undefined) return `- ${factLine(call, data)}`;
    const subjectOf = String(Object.values(call.args)[0] ?? '');
    return `- ${call.name} for ${subjectOf} gave no data (${call.result === undefined ? 'no result' : 'the tool reported an error'}), so I state no figure for it.`;
  });
  return [
    `Here is what my tools report on ${entities.map((e) => e.id).join(', ') || 'your question'}:`,
    ...lines,
    ...invented,
    'These figures move quickly; this is analysis of tool data, not financial advice.',
  ].join('\n');
}

const shortHash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 24);
const callIds = (prefix: string, question: string, round: number, calls: PlannedCall[]) =>
  calls.map((c, i) => `${prefix}${shortHash([question, round, i, c.name, c.args])}`);

// ---------- OpenAI Chat Completions ----------

/** The conversation of a Chat Completions body, read for the agent model. */
export function chatState(body: any): AgentState {
  const messages: any[] = body.messages;
  const last = messages.map((m) => m?.role).lastIndexOf('user');
  const rounds: PastCall[][] = [];
  for (const m of messages.slice(last + 1)) {
    if (m?.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      rounds.push(
        m.tool_calls.map((c: any) => ({
          id: String(c.id),
          name: String(c.function?.name),
          args: parseArgs(c.function?.arguments),
          result: undefined,
          isError: false,
        })),
      );
    } else if (m?.role === 'tool') {
      const call = rounds.at(-1)?.find((c) => c.id === m.tool_call_id);
      if (call) call.result = textOf(m.content);
    }
  }
  const tools: OfferedTool[] = (body.tools ?? [])
    .filter((t: any) => t?.type === 'function' && t.function?.name)
    .map((t: any) => ({
      name: t.function.name,
      description: t.function.description ?? '',
      parameters: t.function.parameters ?? {},
    }));
  return {
    question: last >= 0 ? textOf(messages[last].content) : '',
    rounds,
    tools,
    parallel: body.parallel_tool_calls !== false,
    mayCallTools: body.tool_choice !== 'none',
    hallucinating: isHallucinating(body.model),
  };
}

function parseArgs(text: unknown): Record<string, unknown> {
  try {
    const parsed = JSON.parse(String(text));
    return parsed && typeof parsed === 'object' ? parsed : {};
  } catch {
    return {};
  }
}

/** The agent models as a simulator profile of the chat endpoint (sim/profiles): tool calls, or the final answer. */
export const agentChatProfile: SimProfile = (body) => {
  if (body.response_format) return undefined; // asked as a judge: the plain simulator answers
  const state = chatState(body);
  const step = agentStep(state);
  if (step.kind === 'answer') return { content: step.text };
  const ids = callIds('call_', state.question, state.rounds.length, step.calls);
  const toolCalls = step.calls.map((c, i) => ({
    id: ids[i],
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.args) },
  }));
  return {
    message: { content: null, tool_calls: toolCalls },
    finishReason: 'tool_calls',
    stream: toolCallStream(body, toolCalls),
  };
};

/** A streamed tool-call turn, as OpenAI streams one: the role, each call's id and name, its arguments, then the finish. */
function toolCallStream(
  body: any,
  toolCalls: Array<{ id: string; function: { name: string; arguments: string } }>,
): string {
  const id = `chatcmpl-sim-${shortHash([body.model, body.messages, toolCalls])}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: object, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: body.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const events: unknown[] = [chunk({ role: 'assistant', content: null }, null)];
  toolCalls.forEach((c, index) => {
    events.push(
      chunk(
        { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] },
        null,
      ),
    );
    events.push(chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments } }] }, null));
  });
  events.push(chunk({}, 'tool_calls'));
  return `${events.map((data) => `data: ${JSON.stringify(data)}\n\n`).join('')}data: [DONE]\n\n`;
}

/**
 * The Chat Completions API's rule for tool turns (every model, not only the agent's): an assistant turn with tool_calls is
 * followed by a `tool` message for each call, and a `tool` message answers such a turn. OpenAI's wording
 * (e.g. BerriAI/litellm#10083, agno-agi/agno#3105); null when the messages keep it.
 */
export function chatToolTurnProblem(messages: any[]): { message: string; param: string } | null {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role === 'tool' && !answersToolTurn(messages, i)) {
      return {
        message:
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        param: `messages.[${i}].role`,
      };
    }
    if (m?.role !== 'assistant' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j]?.role === 'tool'; j++)
      answered.add(String(messages[j].tool_call_id));
    const missing = m.tool_calls.map((c: any) => String(c?.id)).filter((id: string) => !answered.has(id));
    if (missing.length > 0) {
      return {
        message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
        param: `messages.[${i}].role`,
      };
    }
  }
  return null;
}

/** Whether the tool message at `index` follows (through other tool messages) an assistant turn that made the call it names. */
function answersToolTurn(messages: any[], index: number): boolean {
  let j = index - 1;
  while (j >= 0 && messages[j]?.role === 'tool') j--;
  const turn = messages[j];
  return (
    turn?.role === 'assistant' &&
    Array.isArray(turn.tool_calls) &&
    turn.tool_calls.some((c: any) => c?.id === messages[index].tool_call_id)
  );
}

// ---------- Anthropic Messages ----------

const blocksOf = (content: unknown): any[] =>
  Array.isArray(content) ? content : typeof content === 'string' ? [{ type: 'text', text: content }] : [];

/** The conversation of a Messages API body, read for the agent model. */
export function messagesState(body: any): AgentState {
  const turns: any[] = body.messages;
  // The question: the last user turn with text of its own (later user turns carry tool results).
  const last = turns
    .map((t) => t?.role === 'user' && blocksOf(t.content).some((b) => b?.type === 'text' && b.text))
    .lastIndexOf(true);
  const rounds: PastCall[][] = [];
  for (const turn of turns.slice(last + 1)) {
    const blocks = blocksOf(turn?.content);
    if (turn?.role === 'assistant') {
      const uses = blocks.filter((b) => b?.type === 'tool_use');
      if (uses.length > 0)
        rounds.push(
          uses.map((b) => ({
            id: String(b.id),
            name: String(b.name),
            args: b.input && typeof b.input === 'object' ? b.input : {},
            result: undefined,
            isError: false,
          })),
        );
    } else {
      for (const b of blocks.filter((x) => x?.type === 'tool_result')) {
        const call = rounds.at(-1)?.find((c) => c.id === b.tool_use_id);
        if (call) Object.assign(call, { result: textOf(b.content), isError: b.is_error === true });
      }
    }
  }
  const tools: OfferedTool[] = (body.tools ?? [])
    .filter((t: any) => t?.name && t.input_schema)
    .map((t: any) => ({ name: t.name, description: t.description ?? '', parameters: t.input_schema }));
  return {
    question:
      last >= 0
        ? blocksOf(turns[last].content)
            .filter((b) => b?.type === 'text')
            .map((b) => b.text)
            .join('')
        : '',
    rounds,
    tools,
    parallel: body.tool_choice?.disable_parallel_tool_use !== true,
    mayCallTools: body.tool_choice?.type !== 'none',
    hallucinating: isHallucinating(body.model),
  };
}

/** The agent model's Messages API reply: text, then tool_use blocks (stop_reason tool_use), or the final text (end_turn). */
export function agentMessagesAnswer(body: any): { content: unknown[]; stopReason: string; answer: string } {
  const state = messagesState(body);
  const step = agentStep(state);
  if (step.kind === 'answer')
    return { content: [{ type: 'text', text: step.text }], stopReason: 'end_turn', answer: step.text };
  const ids = callIds('toolu_sim_', state.question, state.rounds.length, step.calls);
  const uses = step.calls.map((c, i) => ({ type: 'tool_use', id: ids[i], name: c.name, input: c.args }));
  return {
    content: [{ type: 'text', text: step.preamble }, ...uses],
    stopReason: 'tool_use',
    answer: `${step.preamble}\n${JSON.stringify(uses)}`,
  };
}

/**
 * The Messages API's rule for tool turns: each `tool_use` block is answered by a `tool_result` in the next (user) turn,
 * and each `tool_result` answers a `tool_use` of the turn before, in Anthropic's words (anthropics/claude-code#2697,
 * #5989); null when the turns keep it.
 */
export function messagesToolTurnProblem(turns: any[]): string | null {
  for (let i = 0; i < turns.length; i++) {
    const blocks = blocksOf(turns[i]?.content);
    if (turns[i]?.role === 'user') {
      const previous = new Set(
        blocksOf(turns[i - 1]?.content)
          .filter((b) => b?.type === 'tool_use')
          .map((b) => b.id),
      );
      const k = blocks.findIndex((b) => b?.type === 'tool_result' && !previous.has(b.tool_use_id));
      if (k >= 0)
        return `messages.${i}.content.${k}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${blocks[k].tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      continue;
    }
    const uses = blocks.filter((b) => b?.type === 'tool_use').map((b) => String(b.id));
    if (uses.length === 0) continue;
    const answered = new Set(
      blocksOf(turns[i + 1]?.content)
        .filter((b) => b?.type === 'tool_result')
        .map((b) => String(b.tool_use_id)),
    );
    const missing = uses.filter((id) => !answered.has(id));
    // A final assistant turn ending in tool_use is the one the model just made: its results are not due yet.
    if (missing.length > 0 && i < turns.length - 1)
      return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  return null;
}
