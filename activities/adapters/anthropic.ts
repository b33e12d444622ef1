import { z } from 'zod';
import { AdapterError, type AdapterModule } from './types';
import { copilotBaseShape, envNameSchema } from './common';
import { toAdapterError } from './errors';
import { anthropicMessage } from '../../core/llm/call';
import { ANTHROPIC_BASE_URL } from '../../core/llm/providers/anthropicMessages';

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z
      .literal('anthropic')
      .describe(
        "Anthropic's native Messages API (x-api-key, anthropic-version; system prompt apart, alternating non-empty turns).",
      ),
    model: z.string().min(1).describe('Anthropic model id, e.g. claude-sonnet-4-5'),
    baseURL: z
      .string()
      .url()
      .default(ANTHROPIC_BASE_URL)
      .describe('Messages API host; requests go to {baseURL}/v1/messages'),
    apiKeyEnv: envNameSchema
      .default('ANTHROPIC_API_KEY')
      .describe('environment variable holding the API key (sent as x-api-key)'),
    system: z.string().optional().describe('system prompt, sent as the top-level `system` field'),
    maxTokens: z
      .number()
      .int()
      .min(1)
      .default(1024)
      .describe('max_tokens: the answer length cap, required by the Messages API'),
    temperature: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .optional()
      .describe('sampling temperature (0–1 on Anthropic); omitted when unset or null'),
    extraBody: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('further Messages API fields sent as they are (e.g. top_k, metadata, cache_control)'),
  })
  .strict();

export type AnthropicCopilotConfig = z.infer<typeof configSchema>;

/** A copilot played by a model on Anthropic's native Messages API. */
export const anthropicAdapter: AdapterModule<AnthropicCopilotConfig> = {
  type: 'anthropic',
  configSchema,
  supportsHistory: true,
  create(config, { env }) {
    return {
      async collect({ query, signal }) {
        const who = `copilot ${config.name}`;
        const apiKey = env[config.apiKeyEnv];
        if (!apiKey)
          throw new AdapterError(
            'config',
            `${who}: the environment variable ${config.apiKeyEnv} (apiKeyEnv) is not set in the worker's environment`,
          );
        try {
          const answer = await anthropicMessage({
            endpoint: config,
            request: {
              model: config.model,
              system: config.system,
              messages: [
                ...(query.history ?? []).map((t) => ({ role: t.role, content: t.content })),
                { role: 'user', content: query.text },
              ],
              maxTokens: config.maxTokens,
              temperature: config.temperature,
              extraBody: config.extraBody,
            },
            apiKey,
            signal,
          });
          const raw = answer.raw;
          // "refusal: Claude declined to respond" (https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons):
          // a failure with its reason, never an empty answer to judge.
          if (answer.stopReason === 'refusal')
            throw new AdapterError(
              'invalid_reply',
              `${who} refused to answer (stop_reason: refusal)${answer.content ? `: ${answer.content.slice(0, 200)}` : ''}`,
              { raw },
            );
          const stopped = stopProblem(answer.stopReason, answer.toolCalls);
          if (stopped) throw new AdapterError('invalid_reply', `${who}: ${stopped}`, { raw });
          if (!answer.content?.trim())
            throw new AdapterError(
              'invalid_reply',
              `${who} returned an empty answer (stop_reason: ${answer.stopReason ?? 'none'})`,
              { raw },
            );
          const { cacheCreationTokens: _written, ...usage } = answer.usage;
          return {
            text: answer.content,
            raw,
            ...(answer.id ? { conversationId: answer.id } : {}),
            usage,
            ...(answer.rateLimit ? { rateLimit: answer.rateLimit } : {}),
          };
        } catch (error) {
          throw toAdapterError(error, who, { timeout: { signal, ms: config.timeoutMs } });
        }
      },
    };
  },
};

/**
 * Stop reasons that mean the text is not a whole answer (https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons):
 * max_tokens and model_context_window_exceeded cut it off, pause_turn paused a server-tool loop mid-turn, tool_use asks
 * the caller to run a tool (possible only when extraBody declares tools), which judgeflow does not do.
 */
function stopProblem(stopReason: string | null, toolCalls: string[]): string | null {
  if (stopReason === 'max_tokens' || stopReason === 'model_context_window_exceeded')
    return `the answer was cut off (stop_reason: ${stopReason}); raise maxTokens`;
  if (stopReason === 'pause_turn')
    return 'the answer was paused mid-turn by a server tool loop (stop_reason: pause_turn)';
  if (stopReason === 'tool_use')
    return `the model answered with a tool call (${toolCalls.join(', ') || '?'}) instead of text; judgeflow does not run tools for an anthropic copilot`;
  return null;
}
