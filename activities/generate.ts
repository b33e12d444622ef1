import { ApplicationFailure } from '@temporalio/activity';
import { askJson } from '../core/llm/client';
import { saveSnapshot } from '../core/snapshots/snapshots';
import { groupNearDuplicates } from '../core/snapshots/text';
import type { Query } from '../core/model/types';
import { InputError } from '../core/model/inputError';
import type { QueryGeneration } from '../core/model/protocol';
import { protocolFor } from '../rubrics';
import type { GenerateInput, LlmSettings } from '../contract/snapshot';
import type { ActivityDeps } from './deps';
import { cancellationSignal, withHeartbeat } from './heartbeat';
import { INPUT_ERROR, nonRetryableInput } from './failures';

/** The protocol's generation hook; a protocol without one cannot be generated (an input error). */
export function generationOf(protocolId: string): QueryGeneration {
  const protocol = protocolFor(protocolId);
  const generation = protocol.snapshots?.generate;
  if (!generation) throw new InputError(`protocol "${protocol.id}" (${protocol.title}) has no query generator`);
  return generation;
}

/**
 * Query generation activities (the protocol's generation hook does the protocol-specific part). Work rows (ResultsStore.putWork) per job:
 *   plan                  {cells, promptsVersion}
 *   gen/<round>/<cell>    candidate texts one generator request returned
 *   accepted/<round>      {cell: texts} after near-duplicate removal over every candidate so far
 * The workflow only sees counts.
 */

/** `seeded`: with `extend`, the parent snapshot's queries by cell, kept first and never regenerated. */
type Plan = { cells: string[]; promptsVersion: string; seeded?: Record<string, Query[]> };
type Accepted = Record<string, string[]>;

/**
 * A cell's accepted texts as queries: a parent's query keeps its id and fields; a new one is numbered by its place in
 * the cell, skipping ids the parent's queries hold.
 */
function cellQueries(generation: QueryGeneration, cell: string, texts: string[], seeded: Query[]): Query[] {
  const parentByText = new Map(seeded.map((q) => [q.text, q]));
  const used = new Set(seeded.map((q) => q.id));
  let k = 0;
  return texts.map((text) => {
    const parent = parentByText.get(text);
    if (parent) return parent;
    let query = generation.query(cell, k++, text);
    while (used.has(query.id)) query = generation.query(cell, k++, text);
    used.add(query.id);
    return query;
  });
}

export function generateActivities(deps: ActivityDeps) {
  const { store } = deps;
  /** The parent snapshot's queries in the cells being generated (those outside them are not carried over). */
  const parentQueriesByCell = async (
    input: GenerateInput,
    generation: QueryGeneration,
    cells: string[],
  ): Promise<Record<string, Query[]>> => {
    if (!input.parentId)
      throw new InputError('--extend keeps the queries of a parent snapshot: give it with --parent ID');
    if (!(await store.getSnapshot(input.parentId)))
      throw new InputError(
        `--parent ${input.parentId}: no such snapshot in the results store ${store.location} (see judgeflow snapshot list)`,
      );
    const byCell: Record<string, Query[]> = Object.fromEntries(cells.map((c) => [c, []]));
    for (const q of await store.snapshotQueries(input.parentId)) {
      const cell = generation.cellOf(q);
      if (cell && byCell[cell]) byCell[cell].push(q);
    }
    return byCell;
  };
  const plan = async (jobId: string): Promise<Plan> => {
    const p = await store.getWork<Plan>(jobId, 'plan');
    if (!p) throw new Error(`generation job ${jobId} has no plan in the results store ${store.location}`);
    return p;
  };

  return {
    /** Validate the cell subsets and fix the prompts' version for the whole job (first write wins). */
    async planGeneration({ jobId, input }: { jobId: string; input: GenerateInput }): Promise<Plan> {
      return nonRetryableInput(async () => {
        const generation = generationOf(input.protocol);
        const cells = generation.cells({ task: input.tasks, category: input.categories });
        const prompts = generation.loadPrompts();
        const seeded = input.extend ? await parentQueriesByCell(input, generation, cells) : undefined;
        await store.putWork(jobId, 'plan', { cells, promptsVersion: prompts.version, ...(seeded ? { seeded } : {}) });
        return plan(jobId);
      });
    },

    /** One generator request for one cell in one round. A retried (crashed) cell finds its stored answer. */
    async generateCell(args: {
      jobId: string;
      cell: string;
      round: number;
      count: number;
      seed: string;
      llm: LlmSettings;
      protocol?: string;
    }): Promise<{ candidates: number }> {
      const key = `gen/${args.round}/${args.cell}`;
      const done = await store.getWork<string[]>(args.jobId, key);
      if (done) return { candidates: done.length };
      // Jobs started before generation was a protocol hook generated LATTICE queries.
      const generation = await nonRetryableInput(() => generationOf(args.protocol ?? 'lattice'));
      const prompts = generation.loadPrompts();
      const { promptsVersion, seeded } = await plan(args.jobId);
      if (prompts.version !== promptsVersion) {
        throw ApplicationFailure.nonRetryable(
          `the generation prompts changed while job ${args.jobId} was running (version ${promptsVersion} → ${prompts.version}); start a new generation`,
          INPUT_ERROR,
        );
      }
      const previous = args.round > 0 ? await store.getWork<Accepted>(args.jobId, `accepted/${args.round - 1}`) : null;
      const answer = await withHeartbeat(() =>
        askJson({
          settings: args.llm,
          messages: generation.messages({
            prompts,
            cell: args.cell,
            count: args.count,
            seed: `${args.seed}/${args.cell}/round-${args.round}`,
            avoid: previous?.[args.cell] ?? (seeded?.[args.cell] ?? []).map((q) => q.text),
          }),
          spec: generation.spec(1),
          maxInvalidAnswers: 2,
          retryIn: 'conversation',
          env: deps.env,
          signal: cancellationSignal(),
        }),
      );
      // An invalid answer after the re-asks is a failed attempt: Temporal retries the cell, the others are untouched.
      if (!answer.ok) throw new Error(`generator gave no valid queries for cell ${args.cell}: ${answer.error}`);
      const texts = answer.value.queries.map((q) => q.replace(/\s+/g, ' ').trim()).filter(Boolean);
      await store.putWork(args.jobId, key, texts);
      return { candidates: (await store.getWork<string[]>(args.jobId, key))!.length };
    },

    /**
     * Near-duplicate removal within and across cells over every candidate of rounds 0..round, in a fixed order
     * (round, then cell, then position): a candidate is kept when no earlier kept candidate is in its group and its cell
     * has room. Earlier rounds win, so refills only add.
     */
    async dedupeGeneration({
      jobId,
      round,
      perCell,
      similarity,
    }: {
      jobId: string;
      round: number;
      perCell: number;
      similarity: number;
    }): Promise<{ accepted: Record<string, number>; candidates: number; duplicates: number }> {
      const { cells, seeded } = await plan(jobId);
      const pool: Array<{ cell: string; text: string }> = [];
      // A parent's queries come first, so they are always kept (and new ones near them are the duplicates).
      for (const cell of cells) for (const q of seeded?.[cell] ?? []) pool.push({ cell, text: q.text });
      for (let r = 0; r <= round; r++)
        for (const cell of cells)
          for (const text of (await store.getWork<string[]>(jobId, `gen/${r}/${cell}`)) ?? [])
            pool.push({ cell, text });
      const groups = groupNearDuplicates(
        pool.map((p) => p.text),
        { threshold: similarity, byTemplate: false },
      );
      const seededCount = seeded ? Object.values(seeded).reduce((n, qs) => n + qs.length, 0) : 0;
      const groupOf = new Array<number>(pool.length);
      groups.forEach((g, k) => g.forEach((i) => (groupOf[i] = k)));
      const used = new Set<number>();
      const accepted: Accepted = Object.fromEntries(cells.map((c) => [c, []]));
      let duplicates = 0;
      pool.forEach((p, i) => {
        if (i < seededCount) {
          accepted[p.cell].push(p.text);
          used.add(groupOf[i]);
        } else if (used.has(groupOf[i])) duplicates++;
        else if (accepted[p.cell].length < perCell) {
          accepted[p.cell].push(p.text);
          used.add(groupOf[i]);
        }
      });
      await store.putWork(jobId, `accepted/${round}`, accepted);
      const stored = (await store.getWork<Accepted>(jobId, `accepted/${round}`))!;
      return {
        accepted: Object.fromEntries(cells.map((c) => [c, stored[c].length])),
        candidates: pool.length,
        duplicates,
      };
    },

    /** Store the accepted queries as an immutable snapshot with its provenance. */
    async storeGenerated({
      jobId,
      round,
      input,
      workflowId,
    }: {
      jobId: string;
      round: number;
      input: GenerateInput;
      workflowId: string;
    }): Promise<{ snapshotId: string; queries: number; shortCells: string[] }> {
      const { cells, promptsVersion, seeded } = await plan(jobId);
      const accepted = await store.getWork<Accepted>(jobId, `accepted/${round}`);
      if (!accepted) throw new Error(`generation job ${jobId} has no accepted queries for round ${round}`);
      const protocol = protocolFor(input.protocol);
      const generation = generationOf(input.protocol);
      const queries: Query[] = cells.flatMap((cell) =>
        cellQueries(generation, cell, accepted[cell], seeded?.[cell] ?? []),
      );
      if (!queries.length)
        throw ApplicationFailure.nonRetryable(
          'the generator produced no usable queries; nothing to store',
          INPUT_ERROR,
        );
      const shortCells = cells.filter((c) => accepted[c].length < input.perCell);
      const { snapshotId } = await saveSnapshot(store, protocol.labelsOf, {
        queries,
        parentId: input.parentId ?? null,
        meta: {
          generator: generation.generator,
          protocol: protocol.id,
          promptsVersion,
          model: input.llm.model,
          baseURL: input.llm.baseURL,
          params: {
            perCell: input.perCell,
            tasks: input.tasks ?? 'all',
            categories: input.categories ?? 'all',
            seed: input.seed,
            temperature: input.llm.temperature,
            similarity: input.similarity,
            maxRounds: input.maxRounds,
            overAsk: input.overAsk,
            roundsUsed: round + 1,
          },
          ...(shortCells.length ? { shortCells } : {}),
          ...(input.schedule ? { schedule: input.schedule } : {}),
          workflowId,
        },
      });
      return { snapshotId, queries: queries.length, shortCells };
    },
  };
}
