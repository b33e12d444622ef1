/** The batch endpoints of one simulator server: their in-memory state, and the router the server asks first. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpAnswer } from '../http';
import type { ChatContext, SimOptions, SimRequestLog } from '../types';
import { AnthropicBatches, routeAnthropicBatches } from './anthropic';
import { BatchClock } from './engine';
import { OpenAIBatches, routeOpenAIBatches } from './openai';

export interface SimBatches {
  openai: OpenAIBatches;
  anthropic: AnthropicBatches;
  clock: BatchClock;
  close(): void;
}

/** What a batch endpoint needs of its server: the options (timing, judges, faults), the request log, the once-faults' memory. */
export interface BatchContext {
  options: SimOptions;
  log: SimRequestLog[];
  seenOnce: Set<string>;
  batches: SimBatches;
  /** The live chat endpoint's answer to a body (sim/server.ts chatAnswer): a batch line is answered exactly as a live call. */
  chatAnswer: (body: any, ctx: ChatContext) => Promise<HttpAnswer>;
}

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
