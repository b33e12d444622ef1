import fs from 'node:fs';
import { ApplicationFailure } from '@temporalio/activity';
import { categoriseMessages, categoriseSpec, batchId, loadCategorisePrompts } from '../core/categorise';
import { askJson } from '../core/llm';
import { distil, easyQueryTexts, filterByLength, sampleByProportions } from '../core/curation';
import { getWork, putWork, saveSnapshot } from '../core/snapshots';
import { normalizeText } from '../core/text';
import { loadTraffic, type TrafficItem } from '../core/traffic';
import type { Query } from '../core/types';
import { contentHash } from '../core/validate';
import type { CurateInput, LlmSettings, StageCounts } from '../workflows/snapshotTypes';
import type { ActivityDeps } from './deps';
import { cancellationSignal, withHeartbeat } from './heartbeat';
import { INPUT_ERROR, nonRetryableInput } from './failures';

/**
 * CryptoAnalystBench-style curation, one activity per stage (categorisation: one per batch of queries, like generation's
 * one per cell). Each stage reads the previous stage's items from the results store and writes its own (`items/<stage>`)
 * and its counts (`counts/<stage>`); first write wins, so a retried stage returns what it already did. The workflow
 * only sees counts.
 */

type Tagged = TrafficItem & { tag: string };
type Source = { file: string; hash: string; format: string };

/** Traffic that already carries one of the categories keeps it; only the rest is sent to the tagger. */
const pretaggedAs = (item: TrafficItem, known: Set<string>): string | null => (item.tags && known.has(item.tags) ? item.tags : null);

export function curateActivities(deps: ActivityDeps) {
  const { store } = deps;
  const items = <T>(jobId: string, stage: string): T[] => {
    const v = getWork<T[]>(store, jobId, `items/${stage}`);
    if (!v) throw new Error(`curation job ${jobId} has no ${stage} results in the results store ${store.file}`);
    return v;
  };
  const finish = (jobId: string, stage: string, out: unknown[], counts: StageCounts): StageCounts => {
    putWork(store, jobId, `items/${stage}`, out);
    putWork(store, jobId, `counts/${stage}`, counts);
    return getWork<StageCounts>(store, jobId, `counts/${stage}`)!;
  };
  const already = (jobId: string, stage: string) => getWork<StageCounts>(store, jobId, `counts/${stage}`);

  /**
   * Stage 2a: which filtered queries go to the tagger, in batches of `batchSize` (traffic that already carries a known
   * category keeps it). Each batch is stored under its number; the workflow fans out one categoriseBatch per batch.
   */
  async function planCategorisation({ jobId, categories, batchSize }: { jobId: string; categories: string[]; batchSize: number }): Promise<{ batches: number }> {
    const planned = getWork<number>(store, jobId, 'batches');
    if (planned !== null) return { batches: planned };
    putWork(store, jobId, 'categorisePrompts', loadCategorisePrompts().version);
    const known = new Set(categories);
    const toTag = items<TrafficItem>(jobId, 'filter').filter((item) => !pretaggedAs(item, known));
    const batches = Math.ceil(toTag.length / batchSize);
    for (let b = 0; b < batches; b++) putWork(store, jobId, `batch/${b}`, toTag.slice(b * batchSize, (b + 1) * batchSize).map((i) => i.query));
    putWork(store, jobId, 'batches', batches);
    return { batches: getWork<number>(store, jobId, 'batches')! };
  }

  /** Stage 2b: the LLM tags one batch; its labels are stored, so a retried or replayed batch never asks twice. */
  async function categoriseBatch({ jobId, batch, categories, llm }: { jobId: string; batch: number; categories: string[]; llm: LlmSettings }): Promise<void> {
    if (getWork(store, jobId, `tags/${batch}`)) return;
    const texts = getWork<string[]>(store, jobId, `batch/${batch}`);
    if (!texts) throw new Error(`curation job ${jobId} has no categorisation batch ${batch} in the results store ${store.file}`);
    const prompts = loadCategorisePrompts();
    const answer = await withHeartbeat(() =>
      askJson({
        settings: llm,
        messages: categoriseMessages(prompts, categories, texts),
        spec: categoriseSpec(categories, texts.length),
        maxInvalidAnswers: 2,
        retryIn: 'conversation',
        env: deps.env,
        signal: cancellationSignal(),
      }),
    );
    // A batch the tagger cannot label validly is recorded as untagged (counted, dropped), never guessed.
    const labels: Array<string | null> = answer.ok ? texts.map((_, k) => answer.value.labels[batchId(k)]) : texts.map(() => null);
    putWork(store, jobId, `tags/${batch}`, labels);
  }

  /** Stage 2c: every query with its category (pre-tagged or from its batch's labels), in input order; untagged ones are dropped. */
  async function finishCategorisation({ jobId, categories }: { jobId: string; categories: string[] }): Promise<StageCounts> {
    const done = already(jobId, 'categorise');
    if (done) return done;
    const input = items<TrafficItem>(jobId, 'filter');
    const known = new Set(categories);
    const batches = getWork<number>(store, jobId, 'batches')!;
    const llmTags = Array.from({ length: batches }, (_, b) => getWork<Array<string | null>>(store, jobId, `tags/${b}`) ?? getWork<string[]>(store, jobId, `batch/${b}`)!.map(() => null)).flat();
    let next = 0;
    // Input order is kept: later stages keep the first of each near-duplicate group.
    const tagged: Tagged[] = input.flatMap((item) => {
      const tag = pretaggedAs(item, known) ?? llmTags[next++] ?? null;
      return tag ? [{ ...item, tag }] : [];
    });
    const byCategory = Object.fromEntries(categories.map((c) => [c, tagged.filter((t) => t.tag === c).length]));
    return finish(jobId, 'categorise', tagged, { stage: 'categorise', in: input.length, out: tagged.length, pretagged: input.length - next, untagged: input.length - tagged.length, requests: batches, byCategory });
  }

  return {
    /** Stage 1: read the traffic (malformed lines fail the job unless skipBad) and drop too-short / too-long queries. */
    async curateFilter({ jobId, from, minChars, maxChars, skipBad }: { jobId: string; from: string; minChars: number; maxChars: number; skipBad: boolean }): Promise<StageCounts> {
      const done = already(jobId, 'filter');
      if (done) return done;
      return nonRetryableInput(() => {
        const traffic = loadTraffic(from, skipBad);
        putWork(store, jobId, 'source', { file: from, hash: contentHash(fs.readFileSync(from)), format: traffic.format } satisfies Source);
        const { kept, tooShort, tooLong } = filterByLength(traffic.items, minChars, maxChars);
        const badLines = traffic.bad.slice(0, 50).map((b) => b.line);
        return finish(jobId, 'filter', kept, { stage: 'filter', in: traffic.items.length + traffic.bad.length, out: kept.length, malformed: traffic.bad.length, tooShort, tooLong, ...(badLines.length ? { badLines: badLines.join(',') } : {}) });
      });
    },

    planCategorisation,
    categoriseBatch,
    finishCategorisation,

    /**
     * Stage 2 in one activity, for curations started before the workflow fanned the batches out (they replay into
     * this call). The same three steps, the batches `llm.concurrency` at a time.
     */
    async curateCategorise({ jobId, categories, llm, batchSize }: { jobId: string; categories: string[]; llm: LlmSettings; batchSize: number }): Promise<StageCounts> {
      const done = already(jobId, 'categorise');
      if (done) return done;
      const { batches } = await planCategorisation({ jobId, categories, batchSize });
      let next = 0;
      const lane = async () => {
        while (next < batches) await categoriseBatch({ jobId, batch: next++, categories, llm });
      };
      await Promise.all(Array.from({ length: Math.min(llm.concurrency, batches) }, lane));
      return finishCategorisation({ jobId, categories });
    },

    /** Stage 3: one representative per group of near-duplicates (same template or similar text). */
    async curateDistil({ jobId, similarity }: { jobId: string; similarity: number }): Promise<StageCounts> {
      const done = already(jobId, 'distil');
      if (done) return done;
      const input = items<Tagged>(jobId, 'categorise');
      const { kept, groups } = distil(input, similarity);
      return finish(jobId, 'distil', kept, { stage: 'distil', in: input.length, out: kept.length, groups, collapsed: input.length - kept.length, largestGroup: Math.max(0, ...kept.map((k) => k.groupSize)) });
    },

    /** Stage 4: drop queries on which every copilot of an earlier run scored above the threshold (skipped without a run). */
    async curatePrune({ jobId, runId, threshold, metric }: { jobId: string; runId?: string; threshold: number; metric: 'mean' | 'total' }): Promise<StageCounts> {
      const done = already(jobId, 'prune');
      if (done) return done;
      const input = items<Tagged>(jobId, 'distil');
      if (!runId) return finish(jobId, 'prune', input, { stage: 'prune', in: input.length, out: input.length, skipped: true });
      const run = store.getRun(runId);
      if (!run) throw ApplicationFailure.nonRetryable(`--prune-run ${runId}: no such run in the results store ${store.file} (see judgeflow runs)`, INPUT_ERROR);
      const easy = easyQueryTexts({ queries: store.snapshotQueries(run.snapshotId), judgments: store.judgments(runId, run.rubricVersion), copilots: run.copilots, threshold, metric });
      const kept = input.filter((i) => !easy.has(normalizeText(i.query)));
      return finish(jobId, 'prune', kept, { stage: 'prune', in: input.length, out: kept.length, pruned: input.length - kept.length, easyInRun: easy.size, run: runId, threshold, metric });
    },

    /** Stage 5: sample to the target size with the categorised traffic's category proportions, and store the snapshot. */
    async curateSample({ jobId, input, workflowId }: { jobId: string; input: CurateInput; workflowId: string }): Promise<{ counts: StageCounts; snapshotId: string; proportions: Record<string, number>; allocation: Record<string, number> }> {
      const candidates = items<Tagged>(jobId, 'prune');
      const categorised = items<Tagged>(jobId, 'categorise');
      const proportions = Object.fromEntries(input.categories.map((c) => [c, categorised.filter((t) => t.tag === c).length]));
      const { chosen, allocation } = sampleByProportions(candidates, input.target, proportions, input.seed);
      if (!chosen.length) throw ApplicationFailure.nonRetryable('curation left no queries (see the stage counts); loosen --min-chars/--max-chars or the prune threshold', INPUT_ERROR);
      const queries: Query[] = chosen.map((c) => ({ id: `q-${contentHash(normalizeText(c.query), 10)}`, text: c.query, tags: c.tag }));
      const counts: StageCounts = { stage: 'curate', in: candidates.length, out: queries.length, target: input.target, allocation };
      putWork(store, jobId, 'counts/curate', counts);
      const stages = (['filter', 'categorise', 'distil', 'prune', 'curate'] as const).map((s) => getWork<StageCounts>(store, jobId, `counts/${s}`)!);
      const source = getWork<Source>(store, jobId, 'source')!;
      const { snapshotId } = saveSnapshot(store, {
        queries,
        parentId: input.parentId ?? null,
        meta: {
          generator: 'cab-curate',
          protocol: 'cab',
          promptsVersion: getWork<string>(store, jobId, 'categorisePrompts') ?? undefined,
          model: input.llm.model,
          baseURL: input.llm.baseURL,
          source: source.file,
          sourceHash: source.hash,
          params: { target: input.target, minChars: input.minChars, maxChars: input.maxChars, categories: input.categories, pruneRunId: input.pruneRunId ?? null, pruneThreshold: input.pruneThreshold, pruneMetric: input.pruneMetric, seed: input.seed, skipBad: input.skipBad, similarity: input.similarity, batchSize: input.batchSize },
          stages,
          proportions,
          ...(input.schedule ? { schedule: input.schedule } : {}),
          workflowId,
        },
      });
      return { counts: getWork<StageCounts>(store, jobId, 'counts/curate')!, snapshotId, proportions, allocation };
    },
  };
}
