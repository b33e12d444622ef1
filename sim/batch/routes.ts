/** The batch endpoints of one simulator server: their in-memory state, and the router the server asks first. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AnthropicBatches, routeAnthropicBatches } from './anthropic';
import { BatchClock, type BatchServerContext } from './engine';
import { OpenAIBatches, routeOpenAIBatches } from './openai';

export interface SimBatches {
  openai: OpenAIBatches;
  anthropic: AnthropicBatches;
  clock: BatchClock;
  close(): void;
}

/** What the batch endpoints need of their server (sim/batch/engine.ts BatchServerContext), with every API's batches. */
export type BatchContext = BatchServerContext<SimBatches>;

export function createSimBatches(): SimBatches {
  const clock = new BatchClock();
  return { openai: new OpenAIBatches(), anthropic: new AnthropicBatches(), clock, close: () => clock.close() };
}

/** True when the request was one of the batch endpoints (and has been answered). */
export async function routeBatches(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  path: string,
  ctx: BatchContext,
): Promise<boolean> {
  if (path.startsWith('/v1/messages/batches')) return routeAnthropicBatches(req, res, url, path, ctx);
  if (path.startsWith('/v1/files') || path.startsWith('/v1/batches'))
    return routeOpenAIBatches(req, res, url, path, ctx);
  return false;
}
