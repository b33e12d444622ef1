import type OpenAI from 'openai';
import { z } from 'zod';
import { AdapterError, type AdapterModule } from './types';
import { copilotBaseShape, envNameSchema } from './common';
import { toAdapterError } from './errors';
import { optionalParameters, rateLimitHeaders, usageFrom } from '../../core/llm';

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z.literal('openai'),
    baseURL: z.string().url(),
    model: z.string().min(1),
    system: z.string().optional(),
    /** Omitted from requests unless set; null also omits it (reasoning models reject it). */
    temperature: z.number().min(0).max(2).nullable().optional(),
    maxTokens: z.number().int().min(1).optional(),
    maxTokensParam: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
    /** Send a seed derived from the run seed (false for endpoints that reject it). */
    sendSeed: z.boolean().default(true),
    apiKeyEnv: envNameSchema.optional(),
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
