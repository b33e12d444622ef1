import { openaiReasoningModel, type ProviderProfile } from '../profile';

export const profile: ProviderProfile = {
  id: 'openai',
  label: 'OpenAI Chat Completions (api.openai.com)',
  transport: 'openai-chat',
  hosts: [/(^|\.)api\.openai\.com$/],
  seedParam: 'seed',
  seedHonoured: true,
  // OpenAI API reference (chat): max_tokens is deprecated in favour of max_completion_tokens and "not compatible with
  // o-series models"; every current model accepts max_completion_tokens.
  maxTokensParam: 'max_completion_tokens',
  // OpenAI reasoning models: "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1)
  // value is supported." (vercel/ai issue #5609 quotes the same wording for the search-preview models).
  reasoningModel: openaiReasoningModel,
  responseFormat: 'json_schema',
  schemaEnforced: true,
  strict: true,
  errors: '{"error": {"message", "type", "code", "param"}}; 429 with code insufficient_quota when out of credit',
  // OpenAI API reference, "Batch" (https://platform.openai.com/docs/api-reference/batch).
  batchApi: 'openai',
  notes: [
    'o1/o3/o4/gpt-5 families: temperature not sent, max_completion_tokens (OpenAI API reference, reasoning models)',
    '429 insufficient_quota is not retried: "You exceeded your current quota, please check your plan and billing details" (OpenAI error codes guide)',
    'structured-output refusals (message.refusal, content null) recorded as refusals (OpenAI structured outputs guide)',
  ],
  hooks: {
    // OpenAI reasoning models: "Unsupported parameter: 'max_tokens' is not supported with this model." and
    // "Unsupported value: 'temperature' does not support 0 with this model." (OpenAI API reference; vercel/ai issue
    // #5609). Many compatible servers word a refusal alike ("not supported", "unrecognized request argument"), naming
    // the parameter in quotes, in the error's `param`, or bare.
    refusedParameter(text, optional) {
      if (/response_format.*(not supported|unsupported|unavailable)/i.test(text)) return 'response_format';
      if (!/unsupported (parameter|value)|not supported|does not support|unrecognized request argument/i.test(text))
        return null;
      const names = optional.join('|');
      const named =
        text.match(new RegExp(`'(${names})'`)) ??
        text.match(new RegExp(`"param"\\s*:\\s*"(${names})"`)) ??
        text.match(new RegExp(`\\b(${names})\\b`));
      return named ? named[1] : null;
    },
    // OpenAI error codes guide: 429 `insufficient_quota`, "You exceeded your current quota, please check your plan and
    // billing details" — out of credit, not a rate limit: "retrying billing, spend, or quota errors won't restore API access".
    classifyError: (error) =>
      error.codes.includes('insufficient_quota') ||
      (error.status === 429 && /exceeded your current quota/i.test(error.message ?? ''))
        ? { kind: 'quota' }
        : null,
  },
};
