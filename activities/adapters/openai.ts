import { z } from 'zod';
import { AdapterError, type AdapterModule } from './types';
import { copilotBaseShape, envNameSchema } from './common';
import { toAdapterError } from './errors';
import { rateLimitHeaders, usageFrom } from '../../core/llm/client';
import { PROVIDER_IDS, profileOf } from '../../core/llm/providers';
import { chatCompletion } from '../../core/llm/call';
import { contentText, finishProblem, sourcesOf, stripThink, toolCallProblem } from '../../core/llm/providers/extract';
import { ProviderHttpError } from '../../core/llm/providers/httpError';
import { extraBodySchema } from '../../core/llm/judgeConfig';

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z
      .literal('openai')
      .describe('Any OpenAI-compatible Chat Completions endpoint (OpenAI, Fireworks, vLLM, Ollama, the simulator).'),
    baseURL: z
      .string()
      .url()
      .describe('The endpoint, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1 (the simulator).'),
    model: z
      .string()
      .min(1)
      .describe(
        'The model, as the endpoint names it (the simulator: sim-copilot, sim-thorough, sim-terse, sim-refuser).',
      ),
    provider: z
      .enum(PROVIDER_IDS)
      .optional()
      .describe(
        'Provider profile (parameter names, quirks); inferred from the base URL host when absent, else openai-compatible.',
      ),
    system: z.string().optional().describe('A system message sent before the conversation.'),
    temperature: z
      .number()
      .min(0)
      .max(2)
      .nullable()
      .optional()
      .describe(
        'Sampling temperature; omitted from requests unless set, and null omits it too (reasoning models reject it).',
      ),
    maxTokens: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Cap on answer tokens, sent under the name maxTokensParam gives.'),
    maxTokensParam: z
      .enum(['max_tokens', 'max_completion_tokens'])
      .optional()
      .describe(
        "Request field that carries maxTokens; default: the provider profile's (max_completion_tokens for reasoning models).",
      ),
    sendSeed: z
      .boolean()
      .default(true)
      .describe('Send a seed derived from the run seed; false for endpoints that reject it.'),
    apiKeyEnv: envNameSchema
      .optional()
      .describe('Name of the environment variable holding the API key, read by the worker only; never the key itself.'),
    extraBody: extraBodySchema,
  })
  .strict();

export type OpenAICopilotConfig = z.infer<typeof configSchema>;

/** Any OpenAI-compatible Chat Completions endpoint playing a copilot; its provider profile decides the request. */
export const openaiAdapter: AdapterModule<OpenAICopilotConfig> = {
  type: 'openai',
  configSchema,
  supportsHistory: true,
  validate(config) {
    if (profileOf(config).transport !== 'openai-chat')
      throw new Error(
        `provider "${config.provider}" speaks its own API, not Chat Completions: use type: ${config.provider} for this copilot`,
      );
  },
  create(config, { env, seed }) {
    const apiKey = (config.apiKeyEnv && env[config.apiKeyEnv]) || undefined;
    const who = `copilot ${config.name}`;
    return {
      async collect({ query, signal }) {
        const messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }> = [];
        if (config.system) messages.push({ role: 'system', content: config.system });
        for (const turn of query.history ?? []) messages.push({ role: turn.role, content: turn.content });
        messages.push({ role: 'user', content: query.text });
        let raw = '';
        try {
          const { completion, headers } = await chatCompletion({
            endpoint: { ...config, seed: config.sendSeed ? seed : null },
            messages,
            json: null,
            apiKey,
            signal,
          });
          raw = JSON.stringify(completion);
          const rateLimit = rateLimitHeaders(headers);
          const choice = completion.choices[0];
          const message = choice?.message ?? {};
          const content = contentText(message.content);
          const toolCall = content ? null : toolCallProblem(message);
          if (toolCall) throw new AdapterError('tool_call', `${who}: ${toolCall}`, { raw });
          const cut = finishProblem(choice?.finish_reason);
          if (cut) throw new AdapterError('incomplete', `${who}: ${cut}`, { raw });
          // A refusal is an answer to judge (content null, message.refusal: OpenAI structured outputs guide).
          const answer = content ?? (typeof message.refusal === 'string' ? message.refusal : null);
          // The chain of thought of an R1-style model is not the answer: stripped before judging, kept in raw.
          const text = answer === null ? '' : stripThink(answer);
          if (!text.trim())
            throw new AdapterError(
              'invalid_reply',
              `${who} returned an empty answer${answer ? ' (only a <think> block)' : ''}`,
              { raw },
            );
          const sources = sourcesOf(completion, message);
          return {
            text,
            raw,
            conversationId: typeof completion.id === 'string' ? completion.id : undefined,
            ...(completion.usage ? { usage: usageFrom(completion.usage) } : {}),
            ...(rateLimit ? { rateLimit } : {}),
            ...(sources.length ? { sources } : {}),
          };
        } catch (error) {
          // An HTTP error's body is the raw reply kept with the failure.
          throw toAdapterError(error, who, {
            timeout: { signal, ms: config.timeoutMs },
            raw: error instanceof ProviderHttpError ? error.body : raw,
          });
        }
      },
    };
  },
};
