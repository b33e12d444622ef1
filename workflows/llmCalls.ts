import type { ActivityOptions } from '@temporalio/workflow';
import type { LlmSettings } from '../contract/snapshot';
import type { CopilotLimits } from '../contract/run';

/**
 * Options of an activity that makes one generator or tagger request (a generation cell, a categorisation batch):
 * up to three calls (two re-asks after invalid answers) per attempt, a heartbeat so a dead worker is noticed, and
 * `llm.maxAttempts` attempts with backoff for transport failures.
 */
export function llmCallOptions(llm: LlmSettings): ActivityOptions {
  return {
    startToCloseTimeout: llm.timeoutMs * 4 + 30_000,
    heartbeatTimeout: '30 seconds',
    retry: {
      maximumAttempts: llm.maxAttempts,
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      nonRetryableErrorTypes: ['InputError'],
    },
  };
}

/** Options of an activity that asks one copilot one query, within that copilot's timeout and retry settings. */
export function copilotCallOptions(copilot: CopilotLimits): ActivityOptions & { startToCloseTimeout: number } {
  return {
    // The adapter aborts at timeoutMs itself; the margin only catches a worker that died mid-call.
    startToCloseTimeout: copilot.timeoutMs + 30_000,
    heartbeatTimeout: '10 seconds',
    retry: {
      // The activity records the failure itself on its last attempt; the extra attempts only cover crashed workers.
      maximumAttempts: copilot.retry.maxAttempts + 2,
      initialInterval: copilot.retry.initialIntervalMs,
      backoffCoefficient: copilot.retry.backoffCoefficient,
      maximumInterval: copilot.retry.maxIntervalMs,
    },
  };
}
