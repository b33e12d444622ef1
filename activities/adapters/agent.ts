import { z } from 'zod';
import { PROVIDER_IDS, profileOf } from '../../core/llm/providers';
import { extraBodySchema } from '../../core/llm/judgeConfig';
import { copilotCallRecord } from '../../core/stats/cost';
import type { AgentStep } from '../../core/model/agentSteps';
import { AdapterError, type AdapterContext, type AdapterModule, type CollectRequest } from './types';
import { copilotBaseShape, envNameSchema, expandEnv } from './common';
import { toAdapterError } from './errors';
import { mcpServerSchema } from './agent/mcpTools';
import { httpToolSchema } from './agent/httpTools';
import { memoryJournal, runAgent, type Journal } from './agent/loop';
import { Toolbox } from './agent/toolbox';

/**
 * `type: agent` copilots (issue 34): a model that calls tools — from MCP servers and config-declared HTTP tools — until it
 * answers. The final assistant message is the answer the protocols judge; the tool results are its grounding context.
 * Each model turn and tool call is stored as it completes (agent_steps), so a worker killed mid-trajectory loses no
 * finished step. docs/adapters.md (agent) describes the keys.
 */

const toolsSchema = z
  .object({
    mcp: z
      .array(mcpServerSchema)
      .default([])
      .describe(
        'MCP servers whose tools the agent may call: {name, command, args, env} (stdio) or {name, url, headersFromEnv} (Streamable HTTP)',
      ),
    http: z
      .array(httpToolSchema)
      .default([])
      .describe('tools declared here, one HTTP request each (for services without an MCP server)'),
    mode: z
      .enum(['live', 'record', 'replay'])
      .default('live')
      .describe(
        "live: ask the services; record: ask them and keep every result in the run's world snapshot; replay: answer from the world snapshot `world` and ask no service",
      ),
    world: z
      .string()
      .regex(/^world-[0-9a-f]{16}$/, 'a world snapshot id, world-<16 hex digits> (judgeflow world list)')
      .optional()
      .describe('the world snapshot replay answers from (judgeflow world list)'),
    onMissing: z
      .enum(['fail', 'live'])
      .default('fail')
      .describe(
        'replay: a call the world does not hold fails the item with its reason (fail), or is asked live and added, with the replayed world, to a new world snapshot (live)',
      ),
  })
  .strict()
  .superRefine((tools, ctx) => {
    if (tools.mode === 'replay' && !tools.world)
      ctx.addIssue({
        code: 'custom',
        path: ['world'],
        message: 'tools.mode replay needs tools.world: the id of a recorded world snapshot (judgeflow world list)',
      });
    if (tools.mode !== 'replay' && tools.world)
      ctx.addIssue({
        code: 'custom',
        path: ['world'],
        message: `tools.world applies to mode replay; mode ${tools.mode} does not read a world`,
      });
    const names = tools.mcp.map((s) => s.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) ctx.addIssue({ code: 'custom', path: ['mcp'], message: `two MCP servers are named ${twice}` });
  });

const limitsSchema = z
  .object({
    maxSteps: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(8)
      .describe('most model turns per answer; the last one is asked with tool_choice none, so it must answer'),
    maxToolCalls: z
      .number()
      .int()
      .min(0)
      .max(500)
      .default(16)
      .describe('most tool calls per answer; calls past it are answered "not run" and the next turn must answer'),
    wallSeconds: z
      .number()
      .positive()
      .optional()
      .describe(
        'most time per answer, counted from its first step (across retried attempts); timeoutMs bounds each attempt',
      ),
    maxToolErrors: z
      .number()
      .int()
      .min(1)
      .default(3)
      .describe(
        "a tool whose last this-many results in one answer were all errors fails the answer (kind tool), which the run's breaker counts like a failing endpoint",
      ),
  })
  .strict();

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z
      .literal('agent')
      .describe('A model with tools (MCP servers, HTTP tools) as a copilot; every step stored as it completes.'),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .default(300_000)
      .describe(
        'Time one attempt at an answer may take (all its model turns and tool calls); each model call is bounded by it too.',
      ),
    provider: z
      .enum(PROVIDER_IDS)
      .optional()
      .describe(
        'Provider profile: anthropic speaks the Messages API (tool_use); every other profile Chat Completions (tool_calls). Inferred from baseURL when absent.',
      ),
    baseURL: z
      .string()
      .url()
      .describe('The model endpoint, e.g. https://api.openai.com/v1, https://api.anthropic.com, or the simulator'),
    model: z
      .string()
      .min(1)
      .describe('The model, as the endpoint names it (the simulator: sim-agent, sim-agent-hallucinating)'),
    apiKeyEnv: envNameSchema
      .optional()
      .describe('Environment variable holding the API key (anthropic: default ANTHROPIC_API_KEY)'),
    system: z.string().optional().describe("The agent's system prompt (the harness's instructions)"),
    temperature: z.number().min(0).max(2).nullable().optional().describe('Sampling temperature; omitted unless set'),
    maxTokens: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Token cap per model turn (anthropic: default 2048, the API requires one)'),
    sendSeed: z
      .boolean()
      .default(true)
      .describe('Send a seed derived from the run seed (Chat Completions profiles that take one)'),
    extraBody: extraBodySchema,
    tools: toolsSchema
      .default({ mcp: [], http: [], mode: 'live', onMissing: 'fail' })
      .describe("The agent's tools and the world they answer from"),
    limits: limitsSchema.default({ maxSteps: 8, maxToolCalls: 16, maxToolErrors: 3 }).describe('Limits per answer'),
  })
  .strict();

export type AgentCopilotConfig = z.infer<typeof configSchema>;

/** Steps in the results store, keyed by the item; each model turn's call recorded for the run's spend. */
function storeJournal(item: NonNullable<CollectRequest['item']>, config: AgentCopilotConfig): Journal {
  const { store, runId, queryId, copilot } = item;
  return {
    load: async () => (await store.agentSteps(runId, queryId, copilot)).map((s) => s.step),
    save: (step: AgentStep) => store.putAgentStep({ runId, queryId, copilot, step }),
    recordCall: (c) => store.putLlmCall(copilotCallRecord({ runId, queryId, copilot, model: config.model }, c)),
  };
}

export const agentAdapter: AdapterModule<AgentCopilotConfig> = {
  type: 'agent',
  configSchema,
  supportsHistory: true,
  recordsOwnCalls: true,
  validate(config) {
    profileOf(config);
  },
  create(config, context: AdapterContext) {
    const who = `copilot ${config.name}`;
    const toolbox = new Toolbox(config.tools, context.env, (template, where) =>
      expandEnv(template, context.env, where),
    );
    let toolsSaved = false;
    return {
      async collect({ query, signal, item }) {
        try {
          const tools = await toolbox.open(item?.store, item?.runId);
          // The tools as listed at the run's start, kept with the run (first write wins per run and name).
          if (!toolsSaved && context.saveArtefact) {
            const listed = tools.tools.map((t) => ({
              server: t.server,
              name: t.name,
              description: t.description,
              inputSchema: t.inputSchema,
            }));
            await context.saveArtefact({
              name: `agent-tools-${config.name}.json`,
              contentType: 'application/json',
              bytes: Buffer.from(JSON.stringify(listed, null, 2)),
            });
            toolsSaved = true;
          }
          return await runAgent({
            settings: config,
            limits: config.limits,
            env: context.env,
            seed: config.sendSeed ? context.seed : undefined,
            query,
            tools,
            journal: item ? storeJournal(item, config) : memoryJournal(),
            timeoutMs: config.timeoutMs,
            signal,
          });
        } catch (error) {
          if (error instanceof AdapterError) throw error;
          throw toAdapterError(error, who, { timeout: { signal, ms: config.timeoutMs } });
        }
      },
      close: () => toolbox.close(),
    };
  },
};
