import { agentChatProfile } from '../agentModel';
import { deepseek } from './deepseek';
import { fastapiError } from './fastapi';
import { gemini } from './gemini';
import { groqJsonfail } from './groq';
import { mistral } from './mistral';
import { noschema } from './noschema';
import { openrouter200error } from './openrouter';
import { quota } from './quota';
import { refusal } from './refusal';
import { empty, search, stall, toolcall } from './search';
import { streamCut, streamError, streamLength } from './streams';
import { think } from './think';
import { truncate } from './truncate';
import type { SimProfile } from './types';

export type { SimProfile, SimProfileContext } from './types';

/** Provider behaviours by model name: `sim-<name>` (optionally with a suffix, e.g. `sim-think-judge`). Longest name first. */
export const SIM_PROFILES: Record<string, SimProfile> = {
  'openrouter-200error': openrouter200error,
  'groq-jsonfail': groqJsonfail,
  'fastapi-error': fastapiError,
  'stream-length': streamLength,
  'stream-error': streamError,
  'stream-cut': streamCut,
  gemini,
  mistral,
  deepseek,
  noschema,
  think,
  refusal,
  truncate,
  quota,
  search,
  toolcall,
  stall,
  empty,
  agent: agentChatProfile,
};

/** The profile a model name selects, if any (`sim-gemini`, `sim-think-2`…); plain simulator models select none. */
export function simProfileFor(model: string): SimProfile | undefined {
  const name = Object.keys(SIM_PROFILES).find((n) => model === `sim-${n}` || model.startsWith(`sim-${n}-`));
  return name ? SIM_PROFILES[name] : undefined;
}
