import { inferProvider, PROFILES, PROVIDER_IDS, profileOf } from '../../../../core/llm/providers';
import { chatRequestBody } from '../../../../core/llm/providers/request';

const messages = [
  { role: 'system', content: 'You are a judge.' },
  { role: 'user', content: 'Grade this.' },
];
const json = {
  name: 'verdict',
  schema: {
    type: 'object',
    properties: { score: { type: 'integer' } },
    required: ['score'],
    additionalProperties: false,
  },
};
const settings = { model: 'm', temperature: 0, maxTokens: 500, seed: 42 };

test('every provider has a profile; well-known hosts are recognised, anything else is openai-compatible', () => {
  expect(Object.keys(PROFILES).sort()).toEqual([...PROVIDER_IDS].sort());
  expect(inferProvider('https://api.openai.com/v1')).toBe('openai');
  expect(inferProvider('https://generativelanguage.googleapis.com/v1beta/openai/')).toBe('gemini');
  expect(inferProvider('https://api.deepseek.com')).toBe('deepseek');
  expect(inferProvider('https://api.mistral.ai/v1')).toBe('mistral');
  expect(inferProvider('https://api.groq.com/openai/v1')).toBe('groq');
  expect(inferProvider('https://openrouter.ai/api/v1')).toBe('openrouter');
  expect(inferProvider('http://localhost:11434/v1')).toBe('ollama');
  expect(inferProvider('https://api.anthropic.com/v1')).toBe('anthropic');
  expect(inferProvider('http://127.0.0.1:8000/v1')).toBe('openai-compatible');
  expect(profileOf({ provider: 'vllm', baseURL: 'http://127.0.0.1:8000/v1' }).id).toBe('vllm');
});

test('parameter names per provider: seed, random_seed or none; max_tokens or max_completion_tokens', () => {
  const body = (provider: string, model = 'm') =>
    chatRequestBody(profileOf({ provider, baseURL: 'http://x' }), { ...settings, model }, messages, json);
  expect(body('gemini')).not.toHaveProperty('seed');
  expect(body('mistral')).toMatchObject({ random_seed: 42, max_tokens: 500 });
  expect(body('mistral')).not.toHaveProperty('seed');
  expect(body('openai')).toMatchObject({ seed: 42, max_completion_tokens: 500, temperature: 0 });
  // OpenAI's reasoning families: no temperature, max_completion_tokens, without any config.
  for (const model of ['o1', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'openai/o3']) {
    const b = body('openai-compatible', model);
    expect(b).not.toHaveProperty('temperature');
    expect(b).toMatchObject({ max_completion_tokens: 500 });
  }
  expect(body('openai', 'gpt-4o')).toHaveProperty('temperature', 0);
});

test('the schema goes into the prompt exactly when it is not known to be enforced', () => {
  const openai = chatRequestBody(profileOf({ provider: 'openai', baseURL: 'http://x' }), settings, messages, json);
  expect(openai.response_format).toEqual({
    type: 'json_schema',
    json_schema: { name: 'verdict', strict: true, schema: json.schema },
  });
  expect(openai.messages).toEqual(messages);
  const deepseek = chatRequestBody(profileOf({ provider: 'deepseek', baseURL: 'http://x' }), settings, messages, json);
  expect(deepseek.response_format).toEqual({ type: 'json_object' });
  expect((deepseek.messages as typeof messages)[0].content).toContain(JSON.stringify(json.schema));
  expect((deepseek.messages as typeof messages)[1]).toEqual(messages[1]);
  const groq = chatRequestBody(profileOf({ provider: 'groq', baseURL: 'http://x' }), settings, messages, json);
  expect(groq.response_format).toMatchObject({ json_schema: { strict: false } });
});

test('refused parameters are left out, response_format steps down; extraBody passes through and wins', () => {
  const profile = profileOf({ baseURL: 'http://127.0.0.1:9/v1' });
  const dropped = new Set(['seed', 'temperature', 'response_format']);
  const body = chatRequestBody(
    profile,
    { ...settings, extraBody: { reasoning_effort: 'low', web_search_options: {} } },
    messages,
    json,
    dropped,
  );
  expect(body).not.toHaveProperty('seed');
  expect(body).not.toHaveProperty('temperature');
  expect(body).toMatchObject({
    response_format: { type: 'json_object' },
    reasoning_effort: 'low',
    web_search_options: {},
  });
  expect(
    chatRequestBody(profile, settings, messages, json, new Set(['response_format', 'response_format:json_object'])),
  ).not.toHaveProperty('response_format');
  expect(chatRequestBody(profile, settings, messages, json, new Set(['max_tokens']))).toMatchObject({
    max_completion_tokens: 500,
  });
});

test("each provider's quirks are its own profile's hooks; the registry asks them all", () => {
  const { refusedParameter, classifyProviderError, errorInReply, OPTIONAL_PARAMETERS } =
    require('../../../../core/llm/providers') as typeof import('../../../../core/llm/providers');
  const gemini = 'Invalid JSON payload received. Unknown name "seed": Cannot find field.';
  expect(PROFILES.gemini.hooks?.refusedParameter?.(gemini, OPTIONAL_PARAMETERS)).toBe('seed');
  expect(PROFILES.openai.hooks?.refusedParameter?.(gemini, OPTIONAL_PARAMETERS)).toBeNull();
  expect(refusedParameter(gemini)).toBe('seed');
  const mistral = JSON.stringify({
    detail: [{ type: 'extra_forbidden', loc: ['body', 'seed'], msg: 'Extra inputs are not permitted' }],
  });
  expect(PROFILES.mistral.hooks?.refusedParameter?.(mistral, OPTIONAL_PARAMETERS)).toBe('seed');
  expect(
    PROFILES.deepseek.hooks?.refusedParameter?.('This response_format type is unavailable now', OPTIONAL_PARAMETERS),
  ).toBe('response_format');
  // Groq's json_validate_failed is an invalid answer (re-asked), not a bad request.
  const groq = JSON.stringify({
    error: { message: 'Failed to generate JSON.', type: 'invalid_request_error', code: 'json_validate_failed' },
  });
  expect(classifyProviderError(400, groq)).toEqual({
    kind: 'invalid_answer',
    problem: "the provider's JSON validation failed (json_validate_failed): Failed to generate JSON.",
  });
  expect(classifyProviderError(500, groq)).toBeNull();
  // OpenRouter's HTTP 200 with an error: its code when that is a status, else a 5xx.
  expect(PROFILES.openrouter.hooks?.errorInReply?.({ error: { code: 429, message: 'rate limited upstream' } })).toBe(
    429,
  );
  expect(errorInReply({ error: { message: 'upstream died' } })).toBe(502);
  expect(errorInReply({ choices: [], error: null })).toBeNull();
  // Quota in each provider's words; a rate limit is not quota.
  expect(
    PROFILES.anthropic.hooks?.classifyError?.({
      status: 400,
      body: '',
      message: 'Your credit balance is too low to access the Anthropic API.',
      codes: ['invalid_request_error'],
    }),
  ).toEqual({ kind: 'quota' });
  expect(
    PROFILES.openai.hooks?.classifyError?.({
      status: 429,
      body: '',
      message: 'Rate limit reached',
      codes: ['rate_limit_exceeded'],
    }),
  ).toBeNull();
});
