import { openaiError, type SimProfile } from './types';

/** Out of credit: OpenAI's 429 insufficient_quota, in its own words (OpenAI error codes guide). */
export const quota: SimProfile = () =>
  openaiError(
    429,
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
    'insufficient_quota',
    'insufficient_quota',
  );
