import { planRejudge, type RejudgeOptions } from '../../client/rejudge';
import { runInput } from '../../client/startRun';
import { benchmarkRun } from '../../workflows';
import type { RunResult } from '../../contract/run';
import type { TestWorld } from './harness';

/**
 * What `judgeflow rejudge` does, minus the process: plan from the store, then run the same workflow with sourceRunId.
 * Both re-judge test files (LATTICE and CryptoAnalystBench) drive re-judging this way.
 */
export async function rejudgeRun(
  world: TestWorld,
  sourceRunId: string,
  opts: Omit<RejudgeOptions, 'sourceRunId'>,
  runId: string,
): Promise<RunResult> {
  const plan = await planRejudge(world.store, { sourceRunId, ...opts });
  const input = runInput(plan.config, runId, { sourceRunId, reuseJudgments: plan.reuseJudgments });
  return world.client.workflow.execute(benchmarkRun, { taskQueue: world.taskQueue, workflowId: runId, args: [input] });
}
