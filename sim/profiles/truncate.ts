import type { SimProfile } from './types';

/**
 * The token budget spent (a reasoning model's thinking, or a low max_tokens): the answer stops mid-way with
 * finish_reason "length" (covan-ai/covan PR #112: empty content and "length" when reasoning used the whole budget).
 */
export const truncate: SimProfile = (body, ctx) => {
  const full = ctx.plainAnswer(body);
  return { content: full.slice(0, Math.max(1, Math.floor(full.length / 2))), finishReason: 'length' };
};
