import { compareRunConfigs } from '../contract/configChange';
import { InputError } from '../core/model/inputError';
import { requireRun, runJudgeRecord, type ActivityDeps } from './deps';
import { recordedKeys } from '../core/model/runConfig';
import type { WorkflowRunConfig } from '../contract/run';
import { nonRetryableInput } from './failures';

export function runConfigActivities(deps: ActivityDeps) {
  return {
    /**
     * `judgeflow resume --config`: the run record's config (which every activity reads) takes the new endpoint
     * settings; what the record added to the config it started with (simulated, reuseJudgments, the grounding version)
     * is kept, and so is the judge's temperature. Idempotent; refuses a config that changes more than endpoints.
     */
    async replaceRunConfig({ runId, config }: { runId: string; config: WorkflowRunConfig }): Promise<void> {
      const run = await requireRun(deps, runId);
      const stored = run.config;
      await nonRetryableInput(async () => {
        const { refused } = compareRunConfigs(stored, config);
        if (refused.length) throw new InputError(`run ${runId}: the new config would change ${refused.join(', ')}`);
      });
      const next = { ...config, ...recordedKeys(stored) };
      await deps.store.replaceRunConfig(runId, next, {
        ...runJudgeRecord(next, run.judge.temperature ?? 0),
        temperature: run.judge.temperature,
      });
    },
  };
}
