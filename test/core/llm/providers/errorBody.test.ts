import { providerErrorCodes, providerErrorMessage } from '../../../../core/llm/providers/errorBody';
import { isQuotaError, refusedParameter as unsupportedParameter } from '../../../../core/llm/providers';
import { httpFailure } from '../../../../activities/adapters/errors';

describe("every error body shape gives the provider's words", () => {
  test.each([
    ['OpenAI', { error: { message: 'Invalid model', type: 'invalid_request_error' } }, 'Invalid model'],
    [
      'Gemini, array-wrapped',
      [
        {
          error: {
            code: 400,
            message: 'Invalid JSON payload received. Unknown name "seed": Cannot find field.',
            status: 'INVALID_ARGUMENT',
          },
        },
      ],
      'Invalid JSON payload received. Unknown name "seed": Cannot find field.',
    ],
    ['a detail string', { detail: 'Not authenticated' }, 'Not authenticated'],
    [
      'FastAPI validation',
      { detail: [{ loc: ['body', 'messages'], msg: 'prompt too long', type: 'value_error' }] },
      'messages: prompt too long (value_error)',
    ],
    ['a message string', { message: 'Upstream unavailable' }, 'Upstream unavailable'],
    [
      'Mistral nested message.detail[]',
      {
        object: 'error',
        message: {
          detail: [{ type: 'extra_forbidden', loc: ['body', 'seed'], msg: 'Extra inputs are not permitted' }],
        },
      },
      'seed: Extra inputs are not permitted (extra_forbidden)',
    ],
    ['an error string', { error: 'model "x" not found' }, 'model "x" not found'],
  ])('%s', (_, body, words) => expect(providerErrorMessage(JSON.stringify(body))).toBe(words));

  test('a body that is not JSON is the words; an empty one is none', () => {
    expect(providerErrorMessage('Bad Gateway')).toBe('Bad Gateway');
    expect(providerErrorMessage('')).toBeNull();
  });

  test('httpFailure carries those words, never "(no body)" when there was one', () => {
    const gemini = JSON.stringify([{ error: { code: 400, message: 'Unknown name "top_k": Cannot find field.' } }]);
    expect(httpFailure('judge', 400, gemini, null).message).toBe(
      'judge answered HTTP 400: Unknown name "top_k": Cannot find field.',
    );
  });
});

describe('refused parameters are recognised in each documented wording', () => {
  test.each([
    [
      "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.",
      'temperature',
    ],
    [
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      'max_tokens',
    ],
    ['Invalid JSON payload received. Unknown name \\"seed\\": Cannot find field.', 'seed'],
    ['{"detail":[{"type":"extra_forbidden","loc":["body","seed"],"msg":"Extra inputs are not permitted"}]}', 'seed'],
    ['This response_format type is unavailable now', 'response_format'],
    ['The model is overloaded', null],
  ])('%s', (text, parameter) => expect(unsupportedParameter(text)).toBe(parameter));
});

test('quota: insufficient_quota and 402 are quota, a plain 429 is a rate limit', () => {
  const quota = JSON.stringify({
    error: {
      message: 'You exceeded your current quota, please check your plan and billing details.',
      type: 'insufficient_quota',
      code: 'insufficient_quota',
    },
  });
  expect(isQuotaError(429, quota)).toBe(true);
  expect(isQuotaError(402, JSON.stringify({ error: { code: 402, message: 'Insufficient credits' } }))).toBe(true);
  expect(
    isQuotaError(
      429,
      JSON.stringify({ error: { message: 'Rate limit reached for requests', code: 'rate_limit_exceeded' } }),
    ),
  ).toBe(false);
  const failure = httpFailure('judge', 429, quota, '1');
  expect([failure.kind, failure.retryable]).toEqual(['quota', false]);
  expect(failure.message).toMatch(/quota.*You exceeded your current quota/);
  expect(providerErrorCodes(JSON.stringify({ error: { code: 'json_validate_failed' } }))).toContain(
    'json_validate_failed',
  );
});
