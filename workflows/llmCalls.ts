import type { ActivityOptions } from '@temporalio/workflow';
import type { LlmSettings } from './snapshotTypes';

/**
 * Options of an activity that makes one generator or tagger request (a generation cell, a categorisation batch):
 * up to three calls (two re-asks after invalid answers) per attempt, a heartbeat so a dead worker is noticed, and
 * `llm.maxAttempts` attempts with backoff for transport failures.
 */
export function llmCallOptions(llm: LlmSettings): ActivityOptions {
  return {
    startToCloseTimeout: llm.timeoutMs * 4 + 30_000,
    heartbeatTimeout: '30 seconds',
    retry: { maximumAttempts: llm.maxAttempts, initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: ['InputError'] },
  };
}
