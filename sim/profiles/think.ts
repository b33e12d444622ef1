import type { SimProfile } from './types';

/** R1-style models (vLLM, Ollama, Together, Fireworks): the content starts with the chain of thought in <think> tags. */
export const think: SimProfile = (body, ctx) => ({
  content: `<think>\nThe user wants an assessment. Let me weigh {"draft": true} and the risks before answering.\n</think>\n\n${ctx.plainAnswer(body)}`,
});
