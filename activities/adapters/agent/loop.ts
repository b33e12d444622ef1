import type { AgentModelStep, AgentStep, AgentToolStep } from '../../../core/model/agentSteps';
import type { AnswerSource, Query } from '../../../core/model/types';
import { AdapterError, type CollectedResponse } from '../types';
import { modelTurn, type AgentModelSettings } from './model';
import type { ToolSession } from './toolbox';

/**
 * The agent loop: a model turn, then the tools it called (run together), then the next turn, until the model answers
 * without calling a tool. Every step goes to the journal as it completes; a retried attempt starts from the journal's
 * steps, so a finished model turn or tool call is never repeated — only what was in flight when the worker died.
 */

export interface AgentLimits {
  maxSteps: number;
  maxToolCalls: number;
  wallSeconds?: number;
  maxToolErrors: number;
}

/** Where the steps are kept: the results store inside a run, memory outside one. */
export interface Journal {
  load(): Promise<AgentStep[]>;
  save(step: AgentStep): Promise<void>;
  /** A model turn's LLM call, for the run's spend and cost (ok or failed). */
  recordCall(call: {
    ok: boolean;
    errorKind: string | null;
    latencyMs: number;
    usage?: AgentModelStep['usage'];
    requestChars: number | null;
    replyChars: number | null;
  }): Promise<void>;
}

export function memoryJournal(): Journal {
  const steps: AgentStep[] = [];
  return {
    load: async () => [...steps],
    save: async (step) => void (steps.some((s) => s.seq === step.seq) || steps.push(step)),
    recordCall: async () => undefined,
  };
}

export async function runAgent(args: {
  settings: AgentModelSettings;
  limits: AgentLimits;
  env: NodeJS.ProcessEnv;
  seed?: number;
  query: Query;
  tools: ToolSession;
  journal: Journal;
  timeoutMs: number;
  signal: AbortSignal;
}): Promise<CollectedResponse> {
  const { limits, journal, settings } = args;
  const who = `copilot ${settings.name}`;
  const steps = (await args.journal.load()).sort((a, b) => a.seq - b.seq);
  const startedAt = steps.length ? Date.parse(steps[0].startedAt) : Date.now();
  for (;;) {
    if (args.signal.aborted) throw args.signal.reason;
    const lastModel = [...steps].reverse().find((s): s is AgentModelStep => s.kind === 'model');
    if (lastModel && !lastModel.toolCalls.length) return answerOf(lastModel, steps, who);
    if (lastModel) {
      const done = new Set(steps.filter((s) => s.kind === 'tool' && s.turn === lastModel.turn).map((s) => s.seq));
      const pending = lastModel.toolCalls
        .map((call, i) => ({ call, seq: lastModel.seq + 1 + i }))
        .filter((p) => !done.has(p.seq));
      if (pending.length) {
        await runTools(args, steps, lastModel, pending);
        continue;
      }
    }
    const turn = (lastModel?.turn ?? 0) + 1;
    const toolCalls = steps.filter((s) => s.kind === 'tool').length;
    if (limits.wallSeconds !== undefined && Date.now() - startedAt > limits.wallSeconds * 1000)
      throw new AdapterError(
        'agent_limit',
        `${who} gave no final answer within limits.wallSeconds (${limits.wallSeconds} s, from its first step) after ${turn - 1} model turns and ${toolCalls} tool calls`,
      );
    // The last turn allowed, or the tool-call budget spent: the model must answer now (tool_choice none).
    const allowTools = turn < limits.maxSteps && toolCalls < limits.maxToolCalls;
    const started = new Date();
    const seq = steps.length ? steps[steps.length - 1].seq + 1 : 0;
    let reply;
    try {
      reply = await modelTurn({
        settings,
        env: args.env,
        history: (args.query.history ?? []).map((t) => ({ role: t.role, content: t.content })),
        question: args.query.text,
        steps,
        tools: args.tools.tools,
        allowTools,
        seed: args.seed,
        timeoutMs: args.timeoutMs,
        signal: args.signal,
      });
    } catch (error) {
      if (!args.signal.aborted) {
        const kind = error instanceof AdapterError ? error.kind : 'http';
        if (kind !== 'config')
          await journal.recordCall({
            ok: false,
            errorKind: kind,
            latencyMs: Date.now() - started.getTime(),
            requestChars: null,
            replyChars: null,
          });
      }
      throw error;
    }
    const finished = new Date();
    await journal.recordCall({
      ok: true,
      errorKind: null,
      latencyMs: finished.getTime() - started.getTime(),
      usage: reply.usage,
      requestChars: reply.requestChars,
      replyChars: (reply.text ?? '').length + JSON.stringify(reply.toolCalls).length,
    });
    if (!allowTools && reply.toolCalls.length)
      throw new AdapterError(
        'agent_limit',
        `${who} still called tools (${reply.toolCalls.map((c) => c.name).join(', ')}) at its last allowed turn (limits.maxSteps ${limits.maxSteps}, maxToolCalls ${limits.maxToolCalls}) instead of answering`,
        { raw: reply.raw },
      );
    const step: AgentModelStep = {
      kind: 'model',
      seq,
      turn,
      text: reply.text,
      toolCalls: reply.toolCalls,
      usage: reply.usage,
      latencyMs: finished.getTime() - started.getTime(),
      startedAt: started.toISOString(),
      finishedAt: finished.toISOString(),
    };
    await journal.save(step);
    steps.push(step);
  }
}

/** The turn's pending tool calls, together; each stored as it completes. Calls past maxToolCalls are answered "not run". */
async function runTools(
  args: Parameters<typeof runAgent>[0],
  steps: AgentStep[],
  model: AgentModelStep,
  pending: Array<{ call: AgentModelStep['toolCalls'][number]; seq: number }>,
): Promise<void> {
  const { limits } = args;
  const before = steps.filter((s) => s.kind === 'tool' && s.origin !== 'limit').length;
  const results = await Promise.allSettled(
    pending.map(async ({ call, seq }, i) => {
      const started = new Date();
      const overLimit = before + i >= limits.maxToolCalls;
      const result = overLimit
        ? {
            text: `not run: this answer's tool-call limit (maxToolCalls ${limits.maxToolCalls}) is reached; answer with what the tools returned so far`,
            isError: true,
            origin: 'limit' as const,
          }
        : await args.tools.call(call.name, call.arguments, args.signal);
      const finished = new Date();
      const step: AgentToolStep = {
        kind: 'tool',
        seq,
        turn: model.turn,
        callId: call.id,
        tool: call.name,
        arguments: call.arguments,
        result: result.text,
        isError: result.isError,
        origin: result.origin,
        latencyMs: finished.getTime() - started.getTime(),
        startedAt: started.toISOString(),
        finishedAt: finished.toISOString(),
      };
      await args.journal.save(step);
      steps.push(step);
    }),
  );
  steps.sort((a, b) => a.seq - b.seq);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  for (const name of new Set(pending.map((p) => p.call.name))) {
    const runs = steps.filter((s): s is AgentToolStep => s.kind === 'tool' && s.tool === name && s.origin !== 'limit');
    const last = runs.slice(-limits.maxToolErrors);
    if (last.length === limits.maxToolErrors && last.every((s) => s.isError))
      throw new AdapterError(
        'tool',
        `copilot ${args.settings.name}: tool ${name} keeps failing (${limits.maxToolErrors} error results in a row, limits.maxToolErrors): ${last[last.length - 1].result.slice(0, 300)}`,
      );
  }
}

/** The final answer, with the tool results as its context and the sources they named. */
function answerOf(final: AgentModelStep, steps: AgentStep[], who: string): CollectedResponse {
  const text = final.text?.trim() ?? '';
  if (!text) throw new AdapterError('invalid_reply', `${who} returned an empty final answer`, { retryable: false });
  const toolSteps = steps.filter((s): s is AgentToolStep => s.kind === 'tool' && s.origin !== 'limit');
  const context = toolSteps
    .map((s) => `${s.tool} ${JSON.stringify(s.arguments)}${s.isError ? ' (error)' : ''}:\n${s.result}`)
    .join('\n\n');
  const usage = steps
    .filter((s): s is AgentModelStep => s.kind === 'model')
    .reduce(
      (sum, s) => ({
        promptTokens: sum.promptTokens + (s.usage.promptTokens ?? 0),
        completionTokens: sum.completionTokens + (s.usage.completionTokens ?? 0),
        cachedTokens: sum.cachedTokens + (s.usage.cachedTokens ?? 0),
      }),
      { promptTokens: 0, completionTokens: 0, cachedTokens: 0 },
    );
  const sources = sourcesOf(toolSteps);
  return {
    text,
    raw: JSON.stringify({
      steps: steps.length,
      modelTurns: steps.filter((s) => s.kind === 'model').length,
      toolCalls: toolSteps.length,
    }),
    ...(context ? { context } : {}),
    ...(sources.length ? { sources } : {}),
    usage,
  };
}

/** URLs the tool results name (a `source`/`url` field of a JSON result, or a URL in its text), numbered in order. */
function sourcesOf(steps: AgentToolStep[]): AnswerSource[] {
  const seen = new Map<string, AnswerSource>();
  for (const s of steps) {
    if (s.isError) continue;
    for (const url of s.result.match(/https?:\/\/[^\s"'<>)\]]+/g) ?? []) {
      if (!seen.has(url))
        seen.set(url, { id: String(seen.size + 1), url, title: s.tool, text: s.result.slice(0, 2000) });
    }
  }
  return [...seen.values()];
}
