import OpenAI from 'openai';
import { z } from 'zod';
import { AdapterError, type AdapterModule } from './types';
import { copilotBaseShape, envNameSchema, retryAfterMs } from './common';

const configSchema = z
  .object({
    ...copilotBaseShape,
    type: z.literal('openai'),
    baseURL: z.string().url(),
    model: z.string().min(1),
    system: z.string().optional(),
    apiKeyEnv: envNameSchema.optional(),
  })
  .strict();

export type OpenAICopilotConfig = z.infer<typeof configSchema>;

/** Any OpenAI-compatible Chat Completions endpoint playing a copilot. */
export const openaiAdapter: AdapterModule<OpenAICopilotConfig> = {
  type: 'openai',
  configSchema,
  supportsHistory: true,
  create(config, { env }) {
    const client = new OpenAI({
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
          const completion = await client.chat.completions.create({ model: config.model, messages }, { signal });
          const text = completion.choices[0]?.message?.content;
          if (typeof text !== 'string') throw new AdapterError('invalid_reply', `copilot ${config.name} returned no message content`, { raw: JSON.stringify(completion) });
          return { text, raw: JSON.stringify(completion), conversationId: completion.id };
        } catch (error) {
          throw toAdapterError(error, config.name);
        }
      },
    };
  },
};

/** Map openai-node errors onto adapter error kinds, keeping Retry-After. */
export function toAdapterError(error: unknown, who: string): AdapterError {
  if (error instanceof AdapterError) return error;
  if (error instanceof OpenAI.APIUserAbortError) return new AdapterError('timeout', `${who} did not answer before its timeout`, { retryable: true });
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new AdapterError('timeout', `${who}: ${error.message}`, { retryable: true });
  if (error instanceof OpenAI.APIConnectionError) return new AdapterError('network', `${who}: ${error.message}`, { retryable: true });
  if (error instanceof OpenAI.APIError) {
    const status = error.status ?? 0;
    const after = retryAfterMs(error.headers?.get?.('retry-after') ?? undefined);
    if (status === 429) return new AdapterError('rate_limited', `${who} answered HTTP 429`, { retryable: true, retryAfterMs: after });
    return new AdapterError('http', `${who} answered HTTP ${status}: ${error.message}`, { retryable: status >= 500 || status === 408, retryAfterMs: after });
  }
  if (error instanceof Error && error.name === 'SyntaxError') return new AdapterError('invalid_reply', `${who} sent malformed JSON: ${error.message}`, { retryable: true });
  return new AdapterError('network', `${who}: ${error instanceof Error ? error.message : String(error)}`, { retryable: true });
}
