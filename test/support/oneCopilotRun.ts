import type { BenchmarkRunInput } from '../../contract/run';

/**
 * A benchmarkRun input with one live copilot (16 at a time, no retry) and a judge, for the tests that run the real
 * workflow with mocked activities until it continues as new (test/workflows/continueAsNew*.test.ts).
 */
export function oneCopilotRun(runId: string): BenchmarkRunInput {
  return {
    runId,
    config: {
      protocol: 'lattice',
      copilots: [
        {
          name: 'alpha',
          concurrency: 16,
          timeoutMs: 30_000,
          retry: { maxAttempts: 1, initialIntervalMs: 1_000, backoffCoefficient: 2, maxIntervalMs: 10_000 },
        },
      ],
      judge: { concurrency: 4, maxAttempts: 3 },
    } as unknown as BenchmarkRunInput['config'],
  };
}
