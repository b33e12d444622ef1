import { z } from 'zod';
import type { AdapterModule } from './types';
import { openaiAdapter } from './openai';
import { httpAdapter } from './http';
import { browserAdapter } from './browser';
import { csvAdapter } from './csv';
import { anthropicAdapter } from './anthropic';
import { fileAdapter } from './file';
import { agentAdapter } from './agent';

/** Every copilot adapter type. Adding one is a new module here; workflows never change. */
export const adapterModules = [
  openaiAdapter,
  anthropicAdapter,
  httpAdapter,
  browserAdapter,
  csvAdapter,
  fileAdapter,
  agentAdapter,
] as const;

export type CopilotConfig = z.infer<(typeof adapterModules)[number]['configSchema']>;

export const copilotConfigSchema = z.discriminatedUnion(
  'type',
  adapterModules.map((m) => m.configSchema) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<CopilotConfig>;

export function adapterFor(type: string): AdapterModule<{ type: string }> {
  const found = adapterModules.find((m) => m.type === type);
  if (!found) throw new Error(`unknown copilot type "${type}"; known: ${adapterModules.map((m) => m.type).join(', ')}`);
  return found as unknown as AdapterModule<{ type: string }>;
}
