import { usageFrom } from '../../../core/llm/client';
import { anthropicMessage, chatCompletion } from '../../../core/llm/call';
import { profileOf } from '../../../core/llm/providers';
import { contentText, finishProblem, stripThink } from '../../../core/llm/providers/extract';
import type { AgentStep, AgentToolCall, AgentUsage } from '../../../core/model/agentSteps';
import { AdapterError } from '../types';

/**
 * One model turn of an agent, in either wire format the provider profiles know: OpenAI Chat Completions `tools` /
 * `tool_calls` (every openai-chat profile), or Anthropic's Messages API `tools` / `tool_use` / `tool_result`. The
 * conversation is rebuilt from the stored steps each turn, so a resumed item sends exactly what the first attempt would
 * have sent. Requests go through the same code as the openai and anthropic adapters (core/providers).
 */

export interface AgentModelSettings {
  name: string;
  provider?: string;
  baseURL: string;
  model: string;
  apiKeyEnv?: string;
  system?: string;
  temperature?: number | null;
  maxTokens?: number;
  extraBody?: Record<string, unknown>;
}

/** A tool as the model is told of it. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelReply {
  text: string | null;
  toolCalls: AgentToolCall[];
  usage: AgentUsage;
  raw: string;
  /** Characters of the conversation sent (for a cost estimate where the endpoint reports no usage). */
  requestChars: number;
}

/** Anthropic requires max_tokens; OpenAI-style endpoints get none unless set. */
const ANTHROPIC_DEFAULT_MAX_TOKENS = 2048;

export function wireOf(settings: AgentModelSettings): 'openai-chat' | 'anthropic-messages' {
  return profileOf(settings).transport;
}

/**
 * Ask the model for its next turn. `history` is the query's earlier turns, `steps` what this item did so far;
 * `allowTools` false forces a final answer (the step or tool-call limit is reached): tool_choice none.
 */
export async function modelTurn(args: {
  settings: AgentModelSettings;
  env: NodeJS.ProcessEnv;
  history: Array<{ role: 'user' | 'assistant'; content: string }>;
  question: string;
  steps: AgentStep[];
  tools: ToolSpec[];
  allowTools: boolean;
  seed?: number;
  timeoutMs: number;
  signal: AbortSignal;
}): Promise<ModelReply> {
  return wireOf(args.settings) === 'anthropic-messages' ? anthropicTurn(args) : openaiTurn(args);
}

type TurnArgs = Parameters<typeof modelTurn>[0];

async function openaiTurn(args: TurnArgs): Promise<ModelReply> {
  const { settings } = args;
  const apiKey = (settings.apiKeyEnv && args.env[settings.apiKeyEnv]) || undefined;
  const messages: any[] = [];
  if (settings.system) messages.push({ role: 'system', content: settings.system });
  for (const turn of args.history) messages.push({ role: turn.role, content: turn.content });
  messages.push({ role: 'user', content: args.question });
  for (const step of args.steps) {
    if (step.kind === 'model')
      messages.push({
        role: 'assistant',
        content: step.text,
        ...(step.toolCalls.length
          ? {
              tool_calls: step.toolCalls.map((c) => ({
                id: c.id,
                type: 'function',
                function: { name: c.name, arguments: JSON.stringify(c.arguments) },
              })),
            }
          : {}),
      });
    else messages.push({ role: 'tool', tool_call_id: step.callId, content: step.result });
  }
  const tools = args.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema },
  }));
  const toolFields = tools.length ? { tools, tool_choice: args.allowTools ? 'auto' : 'none' } : {};
  // The one request path (core/llm/call.ts): quota pause, the profile's body minus refused parameters, drops re-asked.
  const reply = await chatCompletion({
    endpoint: {
      ...settings,
      seed: args.seed ?? null,
      extraBody: { ...settings.extraBody, ...toolFields },
      timeoutMs: args.timeoutMs,
    },
    messages,
    json: null,
    apiKey,
    signal: args.signal,
  });
  {
    const raw = JSON.stringify(reply.completion);
    const choice = reply.completion.choices[0];
    const message = choice?.message ?? {};
    const calls: AgentToolCall[] = (Array.isArray(message.tool_calls) ? message.tool_calls : []).map(
      (c: any, i: number) => ({
        id: typeof c?.id === 'string' && c.id ? c.id : `call_${i}`,
        name: String(c?.function?.name ?? ''),
        arguments: parseArguments(c?.function?.arguments, `copilot ${settings.name}`, raw),
      }),
    );
    if (!calls.length) {
      const cut = finishProblem(choice?.finish_reason);
      if (cut) throw new AdapterError('incomplete', `copilot ${settings.name}: ${cut}`, { raw });
    }
    const content = contentText(message.content);
    return {
      text: content === null ? null : stripThink(content),
      toolCalls: calls,
      usage: usageFrom(reply.completion.usage),
      raw,
      requestChars: JSON.stringify(messages).length,
    };
  }
}

async function anthropicTurn(args: TurnArgs): Promise<ModelReply> {
  const { settings } = args;
  const apiKeyEnv = settings.apiKeyEnv ?? 'ANTHROPIC_API_KEY';
  const apiKey = args.env[apiKeyEnv];
  if (!apiKey)
    throw new AdapterError(
      'config',
      `copilot ${settings.name}: the environment variable ${apiKeyEnv} (apiKeyEnv) is not set in the worker's environment`,
    );
  const turns: Array<{ role: 'user' | 'assistant'; content: unknown }> = [
    ...args.history.map((t) => ({ role: t.role, content: t.content })),
    { role: 'user' as const, content: args.question },
  ];
  for (const step of args.steps) {
    if (step.kind === 'model') {
      const blocks: unknown[] = [];
      if (step.text) blocks.push({ type: 'text', text: step.text });
      for (const c of step.toolCalls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments });
      turns.push({ role: 'assistant', content: blocks });
    } else {
      // Every tool_result of one assistant turn goes in the one user turn after it.
      const block = {
        type: 'tool_result',
        tool_use_id: step.callId,
        content: step.result,
        ...(step.isError ? { is_error: true } : {}),
      };
      const last = turns.at(-1)!;
      if (last.role === 'user' && Array.isArray(last.content)) last.content.push(block);
      else turns.push({ role: 'user', content: [block] });
    }
  }
  const tools = args.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  const answer = await anthropicMessage({
    endpoint: { ...settings, timeoutMs: args.timeoutMs },
    apiKey,
    signal: args.signal,
    request: {
      model: settings.model,
      system: settings.system,
      messages: [],
      blockTurns: turns,
      maxTokens: settings.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      temperature: settings.temperature,
      extraBody: {
        ...settings.extraBody,
        ...(tools.length ? { tools, tool_choice: { type: args.allowTools ? 'auto' : 'none' } } : {}),
      },
    },
  });
  const raw = answer.raw;
  if (answer.stopReason === 'refusal')
    throw new AdapterError('invalid_reply', `copilot ${settings.name} refused to answer (stop_reason: refusal)`, {
      raw,
    });
  if (answer.stopReason === 'max_tokens' || answer.stopReason === 'model_context_window_exceeded')
    throw new AdapterError(
      'incomplete',
      `copilot ${settings.name}: the turn was cut off (stop_reason: ${answer.stopReason}); raise maxTokens`,
      { raw },
    );
  const blocks: any[] = (JSON.parse(raw)?.content ?? []) as any[];
  const calls = blocks
    .filter((b) => b?.type === 'tool_use')
    .map((b, i) => ({
      id: typeof b.id === 'string' ? b.id : `toolu_${i}`,
      name: String(b.name ?? ''),
      arguments: (b.input && typeof b.input === 'object' ? b.input : {}) as Record<string, unknown>,
    }));
  const { cacheCreationTokens: _written, ...usage } = answer.usage;
  return {
    text: answer.content,
    toolCalls: calls,
    usage,
    raw,
    requestChars: JSON.stringify(turns).length + (settings.system?.length ?? 0),
  };
}

/** Tool-call arguments arrive as a JSON string (OpenAI); a model that writes no valid JSON object fails the turn. */
function parseArguments(value: unknown, who: string, raw: string): Record<string, unknown> {
  if (value && typeof value === 'object') return value as Record<string, unknown>;
  if (value === undefined || value === null || value === '') return {};
  try {
    const parsed = JSON.parse(String(value));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    // reported below
  }
  throw new AdapterError(
    'invalid_reply',
    `${who}: a tool call's arguments are not a JSON object: ${String(value).slice(0, 200)}`,
    { raw, retryable: true },
  );
}
