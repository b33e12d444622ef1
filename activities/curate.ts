import fs from 'node:fs';
import { ApplicationFailure } from '@temporalio/activity';
import { askJson } from '../core/llm/client';
import { distil, easyQueryTexts, filterByLength, sampleByProportions } from '../core/snapshots/curation';
import { saveSnapshot } from '../core/snapshots/snapshots';
import { normalizeText } from '../core/snapshots/text';
import { loadTraffic, type TrafficItem } from '../core/snapshots/traffic';
import type { Query } from '../core/model/types';
import { contentHash } from '../core/model/hashing';
import { InputError } from '../core/model/inputError';
import type { QueryCuration } from '../core/model/protocol';
import { protocolFor } from '../rubrics';
import type { CurateInput, LlmSettings, CurationStageCounts } from '../contract/snapshot';
import { consensusVerdicts, type ActivityDeps } from './deps';
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

/** The protocol's curation hook; curation jobs started before it was one curated CryptoAnalystBench queries. */
export function curationOf(protocolId = 'cab'): QueryCuration {
  const protocol = protocolFor(protocolId);
  const curation = protocol.snapshots?.curate;
  if (!curation)
    throw new InputError(`protocol "${protocol.id}" (${protocol.title}) cannot curate snapshots from traffic`);
  return curation;
}

/** Traffic that already carries one of the categories keeps it; only the rest is sent to the tagger. */
const pretaggedAs = (item: TrafficItem, known: Set<string>): string | null =>
  item.tags && known.has(item.tags) ? item.tags : null;

export function curateActivities(deps: ActivityDeps) {
  const { store } = deps;
  const items = async <T>(jobId: string, stage: string): Promise<T[]> => {
    const v = await store.getWork<T[]>(jobId, `items/${stage}`);
    if (!v) throw new Error(`curation job ${jobId} has no ${stage} results in the results store ${store.location}`);
    return v;
  };
  const finish = async (
    jobId: string,
    stage: string,
    out: unknown[],
    counts: CurationStageCounts,
  ): Promise<CurationStageCounts> => {
    await store.putWork(jobId, `items/${stage}`, out);
    await store.putWork(jobId, `counts/${stage}`, counts);
    return (await store.getWork<CurationStageCounts>(jobId, `counts/${stage}`))!;
  };
  const already = (jobId: string, stage: string) => store.getWork<CurationStageCounts>(jobId, `counts/${stage}`);

  /**
   * Stage 2a: which filtered queries go to the tagger, in batches of `batchSize` (traffic that already carries a known
   * category keeps it). Each batch is stored under its number; the workflow fans out one categoriseBatch per batch.
   */
  async function planCategorisation({
    jobId,
    categories,
    batchSize,
    protocol,
  }: {
    jobId: string;
    categories: string[];
    batchSize: number;
    protocol?: string;
  }): Promise<{ batches: number }> {
    const planned = await store.getWork<number>(jobId, 'batches');
    if (planned !== null) return { batches: planned };
    const curation = await nonRetryableInput(async () => curationOf(protocol));
    await store.putWork(jobId, 'categorisePrompts', curation.loadPrompts().version);
    const known = new Set(categories);
    const toTag = (await items<TrafficItem>(jobId, 'filter')).filter((item) => !pretaggedAs(item, known));
    const batches = Math.ceil(toTag.length / batchSize);
    for (let b = 0; b < batches; b++)
      await store.putWork(
        jobId,
        `batch/${b}`,
        toTag.slice(b * batchSize, (b + 1) * batchSize).map((i) => i.query),
      );
    await store.putWork(jobId, 'batches', batches);
    return { batches: (await store.getWork<number>(jobId, 'batches'))! };
  }

  /** Stage 2b: the LLM tags one batch; its labels are stored, so a retried or replayed batch never asks twice. */
  async function categoriseBatch({
    jobId,
    batch,
    categories,
    llm,
    protocol,
  }: {
    jobId: string;
    batch: number;
    categories: string[];
    llm: LlmSettings;
    protocol?: string;
  }): Promise<void> {
    if (await store.getWork(jobId, `tags/${batch}`)) return;
    const texts = await store.getWork<string[]>(jobId, `batch/${batch}`);
    if (!texts)
      throw new Error(
        `curation job ${jobId} has no categorisation batch ${batch} in the results store ${store.location}`,
      );
    const curation = await nonRetryableInput(async () => curationOf(protocol));
    const prompts = curation.loadPrompts();
    const answer = await withHeartbeat(() =>
      askJson({
        settings: llm,
        messages: curation.messages(prompts, categories, texts),
        spec: curation.spec(categories, texts.length),
        maxInvalidAnswers: 2,
        retryIn: 'conversation',
        env: deps.env,
        signal: cancellationSignal(),
      }),
    );
    // A batch the tagger cannot label validly is recorded as untagged (counted, dropped), never guessed.
    const labels: Array<string | null> = answer.ok
      ? texts.map((_, k) => answer.value.labels[curation.batchId(k)])
      : texts.map(() => null);
    await store.putWork(jobId, `tags/${batch}`, labels);
  }

  /** Stage 2c: every query with its category (pre-tagged or from its batch's labels), in input order; untagged ones are dropped. */
  async function finishCategorisation({
    jobId,
    categories,
  }: {
    jobId: string;
    categories: string[];
  }): Promise<CurationStageCounts> {
    const done = await already(jobId, 'categorise');
    if (done) return done;
    const input = await items<TrafficItem>(jobId, 'filter');
    const known = new Set(categories);
    const batches = (await store.getWork<number>(jobId, 'batches'))!;
    const llmTags: Array<string | null> = [];
    for (let b = 0; b < batches; b++)
      llmTags.push(
        ...((await store.getWork<Array<string | null>>(jobId, `tags/${b}`)) ??
          (await store.getWork<string[]>(jobId, `batch/${b}`))!.map(() => null)),
      );
    let next = 0;
    // Input order is kept: later stages keep the first of each near-duplicate group.
    const tagged: Tagged[] = input.flatMap((item) => {
      const tag = pretaggedAs(item, known) ?? llmTags[next++] ?? null;
      return tag ? [{ ...item, tag }] : [];
    });
    const byCategory = Object.fromEntries(categories.map((c) => [c, tagged.filter((t) => t.tag === c).length]));
    return finish(jobId, 'categorise', tagged, {
      stage: 'categorise',
      in: input.length,
      out: tagged.length,
      pretagged: input.length - next,
      untagged: input.length - tagged.length,
      requests: batches,
      byCategory,
    });
  }

  return {
    /** Stage 1: read the traffic (malformed lines fail the job unless skipBad) and drop too-short / too-long queries. */
    async curateFilter({
      jobId,
      from,
      minChars,
      maxChars,
      skipBad,
    }: {
      jobId: string;
      from: string;
      minChars: number;
      maxChars: number;
      skipBad: boolean;
    }): Promise<CurationStageCounts> {
      const done = await already(jobId, 'filter');
      if (done) return done;
      return nonRetryableInput(async () => {
        const traffic = loadTraffic(from, skipBad);
        await store.putWork(jobId, 'source', {
          file: from,
          hash: contentHash(fs.readFileSync(from)),
          format: traffic.format,
        } satisfies Source);
        const { kept, tooShort, tooLong } = filterByLength(traffic.items, minChars, maxChars);
        const badLines = traffic.bad.slice(0, 50).map((b) => b.line);
        return finish(jobId, 'filter', kept, {
          stage: 'filter',
          in: traffic.items.length + traffic.bad.length,
          out: kept.length,
          malformed: traffic.bad.length,
          tooShort,
          tooLong,
          ...(badLines.length ? { badLines: badLines.join(',') } : {}),
        });
      });
    },

    planCategorisation,
    categoriseBatch,
    finishCategorisation,

    /** Stage 3: one representative per group of near-duplicates (same template or similar text). */
    async curateDistil({ jobId, similarity }: { jobId: string; similarity: number }): Promise<CurationStageCounts> {
      const done = await already(jobId, 'distil');
      if (done) return done;
      const input = await items<Tagged>(jobId, 'categorise');
      const { kept, groups } = distil(input, similarity);
      return finish(jobId, 'distil', kept, {
        stage: 'distil',
        in: input.length,
        out: kept.length,
        groups,
        collapsed: input.length - kept.length,
        largestGroup: Math.max(0, ...kept.map((k) => k.groupSize)),
      });
    },

    /** Stage 4: drop queries on which every copilot of an earlier run scored above the threshold (skipped without a run). */
    async curatePrune({
      jobId,
      runId,
      threshold,
      metric,
    }: {
      jobId: string;
      runId?: string;
      threshold: number;
      metric: 'mean' | 'total';
    }): Promise<CurationStageCounts> {
      const done = await already(jobId, 'prune');
      if (done) return done;
      const input = await items<Tagged>(jobId, 'distil');
      if (!runId)
        return finish(jobId, 'prune', input, { stage: 'prune', in: input.length, out: input.length, skipped: true });
      const run = await store.getRun(runId);
      if (!run)
        throw ApplicationFailure.nonRetryable(
          `--prune-run ${runId}: no such run in the results store ${store.location} (see judgeflow runs)`,
          INPUT_ERROR,
        );
      const protocol = protocolFor(run.protocol);
      const isDimension = (key: string) => protocol.scoreKey(key).kind === 'dimension';
      const easy = easyQueryTexts({
        queries: await store.snapshotQueries(run.snapshotId),
        judgments: await consensusVerdicts(store, run),
        copilots: run.copilots,
        threshold,
        metric,
        isDimension,
      });
      const kept = input.filter((i) => !easy.has(normalizeText(i.query)));
      return finish(jobId, 'prune', kept, {
        stage: 'prune',
        in: input.length,
        out: kept.length,
        pruned: input.length - kept.length,
        easyInRun: easy.size,
        run: runId,
        threshold,
        metric,
      });
    },

    /** Stage 5: sample to the target size with the categorised traffic's category proportions, and store the snapshot. */
    async curateSample({
      jobId,
      input,
      workflowId,
    }: {
      jobId: string;
      input: CurateInput;
      workflowId: string;
    }): Promise<{
      counts: CurationStageCounts;
      snapshotId: string;
      proportions: Record<string, number>;
      allocation: Record<string, number>;
    }> {
      const candidates = await items<Tagged>(jobId, 'prune');
      const categorised = await items<Tagged>(jobId, 'categorise');
      const proportions = Object.fromEntries(
        input.categories.map((c) => [c, categorised.filter((t) => t.tag === c).length]),
      );
      const { chosen, allocation } = sampleByProportions(candidates, input.target, proportions, input.seed);
      if (!chosen.length)
        throw ApplicationFailure.nonRetryable(
          'curation left no queries (see the stage counts); loosen --min-chars/--max-chars or the prune threshold',
          INPUT_ERROR,
        );
      const protocol = protocolFor(input.protocol ?? 'cab');
      const curation = curationOf(protocol.id);
      const queries: Query[] = chosen.map((c) =>
        curation.query({ id: `q-${contentHash(normalizeText(c.query), 10)}`, text: c.query, category: c.tag }),
      );
      const counts: CurationStageCounts = {
        stage: 'curate',
        in: candidates.length,
        out: queries.length,
        target: input.target,
        allocation,
      };
      await store.putWork(jobId, 'counts/curate', counts);
      const stages = await Promise.all(
        (['filter', 'categorise', 'distil', 'prune', 'curate'] as const).map(
          async (s) => (await store.getWork<CurationStageCounts>(jobId, `counts/${s}`))!,
        ),
      );
      const source = (await store.getWork<Source>(jobId, 'source'))!;
      const promptsVersion = (await store.getWork<string>(jobId, 'categorisePrompts')) ?? undefined;
      const { snapshotId } = await saveSnapshot(store, protocol.labelsOf, {
        queries,
        parentId: input.parentId ?? null,
        meta: {
          generator: curation.generator,
          protocol: protocol.id,
          promptsVersion,
          model: input.llm.model,
          baseURL: input.llm.baseURL,
          source: source.file,
          sourceHash: source.hash,
          params: {
            target: input.target,
            minChars: input.minChars,
            maxChars: input.maxChars,
            categories: input.categories,
            pruneRunId: input.pruneRunId ?? null,
            pruneThreshold: input.pruneThreshold,
            pruneMetric: input.pruneMetric,
            seed: input.seed,
            skipBad: input.skipBad,
            similarity: input.similarity,
            batchSize: input.batchSize,
          },
          stages,
          proportions,
          ...(input.schedule ? { schedule: input.schedule } : {}),
          workflowId,
        },
      });
      return {
        counts: (await store.getWork<CurationStageCounts>(jobId, 'counts/curate'))!,
        snapshotId,
        proportions,
        allocation,
      };
    },
  };
}
