import { compareRunConfigs } from '../contract/configChange';
import { InputError } from '../core/model/inputError';
import { requireRun, runJudgeRecord, type ActivityDeps, type StoredRunConfig } from './deps';
import { nonRetryableInput } from './failures';

export function runConfigActivities(deps: ActivityDeps) {
  return {
    /**
     * `judgeflow resume --config`: the run record's config (which every activity reads) takes the new endpoint
     * settings; what the record added to the config it started with (simulated, reuseJudgments, the grounding version)
     * is kept, and so is the judge's temperature. Idempotent; refuses a config that changes more than endpoints.
     */
    async replaceRunConfig({ runId, config }: { runId: string; config: Record<string, unknown> }): Promise<void> {
      const run = await requireRun(deps, runId);
      const stored = run.config as unknown as Record<string, unknown>;
      await nonRetryableInput(async () => {
        const { refused } = compareRunConfigs(stored, config);
        if (refused.length) throw new InputError(`run ${runId}: the new config would change ${refused.join(', ')}`);
      });
      const kept = Object.fromEntries(['simulated', 'reuseJudgments', 'groundingVersion', 'runKey'].filter((k) => k in stored).map((k) => [k, stored[k]]));
      const next = { ...config, ...kept } as unknown as StoredRunConfig;
      await deps.store.replaceRunConfig(runId, next, { ...runJudgeRecord(next, run.judge.temperature ?? 0), temperature: run.judge.temperature });
    },
  };
}
