import { proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { stageProgressQuery, type StageProgress } from '../contract/stageProgress';
import type { SnapshotActivities } from '../activities';
import { llmCallOptions } from './llmCalls';
import { runPool } from './pool';
import type { GenerateInput, GenerateResult } from '../contract/snapshot';

const { planGeneration, dedupeGeneration, storeGenerated } = proxyActivities<SnapshotActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['InputError'] },
});

/**
 * LATTICE query generation: one activity per task × category cell (a crashed cell is retried alone), then
 * near-duplicate removal within and across cells; cells left short are regenerated, asking for more than they
 * need, for at most `maxRounds` rounds. The queries live in the results store; this history holds only counts.
 */
export async function snapshotGenerate(input: GenerateInput): Promise<GenerateResult> {
  const jobId = workflowInfo().workflowId;
  const { generateCell } = proxyActivities<SnapshotActivities>(llmCallOptions(input.llm));
  const progress: StageProgress = { stage: 'plan', done: 0, total: 0, failures: 0 };
  setHandler(stageProgressQuery, () => progress);
  const { cells, promptsVersion } = await planGeneration({ jobId, input });
  const need: Record<string, number> = Object.fromEntries(cells.map((c) => [c, input.perCell]));
  let round = 0;
  let last = { accepted: {} as Record<string, number>, candidates: 0, duplicates: 0 };
  for (; round < input.maxRounds; round++) {
    const open = cells.filter((c) => need[c] > 0);
    if (!open.length) break;
    const r = round;
    Object.assign(progress, { stage: `round ${r + 1}`, done: 0, total: open.length, failures: 0 });
    await runPool(open, input.llm.concurrency, 0, async (cell) => {
      const count = need[cell] + Math.max(1, Math.ceil(need[cell] * input.overAsk));
      try {
        await generateCell({
          jobId,
          cell,
          round: r,
          count,
          seed: input.seed,
          llm: input.llm,
          protocol: input.protocol,
        });
        progress.done++;
      } catch {
        progress.done++;
        progress.failures++;
        // The cell failed for good this round (e.g. the generator kept answering nonsense); the next round tries again.
      }
    });
    last = await dedupeGeneration({ jobId, round, perCell: input.perCell, similarity: input.similarity });
    for (const c of cells) need[c] = input.perCell - (last.accepted[c] ?? 0);
  }
  const finalRound = Math.max(0, round - 1);
  Object.assign(progress, { stage: 'store', done: 0, total: 0 });
  const stored = await storeGenerated({ jobId, round: finalRound, input, workflowId: jobId });
  return {
    jobId,
    snapshotId: stored.snapshotId,
    parentId: input.parentId ?? null,
    queries: stored.queries,
    cells: cells.length,
    rounds: finalRound + 1,
    candidates: last.candidates,
    duplicatesRemoved: last.duplicates,
    shortCells: stored.shortCells,
    promptsVersion,
  };
}
