import type OpenAI from 'openai';
import { z } from 'zod';
import { AdapterError, type AdapterModule } from './types';
import { copilotBaseShape, envNameSchema } from './common';
import { toAdapterError } from './errors';
import { optionalParameters, rateLimitHeaders, usageFrom } from '../../core/llm';

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z.literal('openai').describe('Any OpenAI-compatible Chat Completions endpoint (OpenAI, Fireworks, vLLM, Ollama, the simulator).'),
    baseURL: z.string().url().describe('The endpoint, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1 (the simulator).'),
    model: z.string().min(1).describe('The model, as the endpoint names it (the simulator: sim-copilot, sim-thorough, sim-terse, sim-refuser).'),
    system: z.string().optional().describe('A system message sent before the conversation.'),
    temperature: z.number().min(0).max(2).nullable().optional().describe('Sampling temperature; omitted from requests unless set, and null omits it too (reasoning models reject it).'),
    maxTokens: z.number().int().min(1).optional().describe('Cap on answer tokens, sent under the name maxTokensParam gives.'),
    maxTokensParam: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens').describe('Request field that carries maxTokens (newer OpenAI models want max_completion_tokens).'),
    sendSeed: z.boolean().default(true).describe('Send a seed derived from the run seed; false for endpoints that reject it.'),
    apiKeyEnv: envNameSchema.optional().describe('Name of the environment variable holding the API key, read by the worker only; never the key itself.'),
  })
  .strict();

export type OpenAICopilotConfig = z.infer<typeof configSchema>;

/** The SDK is loaded on first use (a copilot call or an error to classify), not when configs are read. */
const openaiSdk = (): typeof OpenAI => (require('openai') as typeof import('openai')).default;

/** Any OpenAI-compatible Chat Completions endpoint playing a copilot. */
export const openaiAdapter: AdapterModule<OpenAICopilotConfig> = {
  type: 'openai',
  configSchema,
  supportsHistory: true,
  create(config, { env, seed }) {
    const client = new (openaiSdk())({
      baseURL: config.baseURL,
      apiKey: (config.apiKeyEnv && env[config.apiKeyEnv]) || 'unused',
      maxRetries: 0, // retries belong to Temporal so they are visible and bounded per copilot
    });
    return {
      async collect({ query, signal }) {
        const messages: OpenAI.ChatCompletionMessageParam[] = [];
        if (config.system) messages.push({ role: 'system', content: config.system });
        for (const turn of query.history ?? []) messages.push({ role: turn.role, content: turn.content });
        messages.push({ role: 'user', content: query.text });
        try {
          const { data: completion, response } = await client.chat.completions
            .create({ model: config.model, messages, ...optionalParameters({ ...config, seed: config.sendSeed ? seed : null }) }, { signal })
            .withResponse();
          const rateLimit = rateLimitHeaders(response.headers);
          const text = completion.choices[0]?.message?.content;
          if (typeof text !== 'string') throw new AdapterError('invalid_reply', `copilot ${config.name} returned no message content`, { raw: JSON.stringify(completion) });
          return { text, raw: JSON.stringify(completion), conversationId: completion.id, ...(completion.usage ? { usage: usageFrom(completion.usage) } : {}), ...(rateLimit ? { rateLimit } : {}) };
        } catch (error) {
          throw toAdapterError(error, `copilot ${config.name}`, { timeout: { signal, ms: config.timeoutMs } });
        }
      },
    };
  },
};
