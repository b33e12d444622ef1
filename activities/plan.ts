import { judgeUnitTimeoutMs, type ReadyResponse } from '../core/model/protocol';
import type { Query } from '../core/model/types';
import { slotOf, type JudgeUnit, type RunRecord } from '../core/model/store';
import type { RunPlan, StoredProgress } from '../contract/run';
import { protocolFor } from '../rubrics';
import { adapterFor } from './adapters';
import {
  protocolOptions,
  requireRubric,
  requireRun,
  runJudges,
  runSamples,
  type ActivityDeps,
  type StoredRunConfig,
} from './deps';
import { workItems } from '../core/model/workItems';
import { groundingWorkItems, withGroundingTimeout } from './grounding';

/** Snapshots are immutable: a worker keeps the last few it read, with each query's position. */
const snapshotCache = new Map<string, { byId: Map<string, { query: Query; position: number }> }>();

export function planActivities(deps: ActivityDeps) {
  const { store } = deps;

  async function snapshotIndex(snapshotId: string) {
    let cached = snapshotCache.get(snapshotId);
    if (!cached) {
      const queries = await store.snapshotQueries(snapshotId);
      cached = { byId: new Map(queries.map((query, position) => [query.id, { query, position }])) };
      if (snapshotCache.size >= 4) snapshotCache.delete(snapshotCache.keys().next().value!);
      snapshotCache.set(snapshotId, cached);
    }
    return cached.byId;
  }

  /** What the protocols decide readiness by (ReadyResponse: copilot and status), per query: never texts or payloads. */
  async function responseStatusesOf(
    runId: string,
    copilots: string[],
    queryIds: string[],
  ): Promise<Map<string, ReadyResponse[]>> {
    const byQuery = new Map<string, ReadyResponse[]>(queryIds.map((q) => [q, []]));
    for (const r of await store.responseStatuses(runId, copilots, queryIds)) byQuery.get(r.queryId)?.push(r);
    return byQuery;
  }

  /** The protocol's units become judge work items here: each unit once per sample and per judge (core/model/workItems.ts); grounding checks after them. */
  async function appendJudgeWork(
    run: RunRecord & { config: StoredRunConfig },
    units: JudgeUnit[],
    grounding: JudgeUnit[] = [],
  ): Promise<number> {
    return store.appendJudgeUnits(run.runId, [
      ...workItems(
        units,
        runSamples(run.config),
        runJudges(run.config).map((j) => j.name),
      ),
      ...grounding,
    ]);
  }

  /** What the store holds of a run: every copilot's stored answers (any status), and which planned work items are judged. */
  async function storedProgress(run: RunRecord, live: string[]): Promise<StoredProgress> {
    const answered: Record<string, string[]> = Object.fromEntries(live.map((c) => [c, []]));
    let answersFailed = 0;
    for (const r of await store.responses(run.runId)) {
      if (!live.includes(r.copilot)) continue; // imported and adopted answers are counted as they are imported
      answered[r.copilot].push(r.queryId);
      if (r.status !== 'ok') answersFailed++;
    }
    const verdicts = new Map(
      (await store.judgments(run.runId, run.rubricVersion)).map((j) => [
        `${j.queryId}\u0000${j.copilot}\u0000${j.judgeName ?? ''}\u0000${j.sample ?? 0}`,
        j.status,
      ]),
    );
    const units = await store.judgeUnits(run.runId);
    const unjudged: number[] = [];
    let judgedFailed = 0;
    units.forEach((unit, index) => {
      const { judge, sample } = slotOf(unit);
      const statuses = unit.copilots.map((c) => verdicts.get(`${unit.queryId}\u0000${c}\u0000${judge}\u0000${sample}`));
      if (statuses.some((status) => status === undefined)) unjudged.push(index);
      else if (statuses.some((status) => status !== 'ok')) judgedFailed++;
    });
    return { answered, answersFailed, planned: units.length, unjudged, judgedFailed };
  }

  return {
    /**
     * Before a run's first answer: the protocol's plan made ahead (if it has one), and how answers arrive. Resumed from
     * the store (`resumeFromStore`), also what it holds already (see StoredProgress), so nothing is asked twice.
     */
    async planRun({ runId, resumeFromStore }: { runId: string; resumeFromStore?: boolean }): Promise<RunPlan> {
      const run = await requireRun(deps, runId);
      const protocol = protocolFor(run.protocol);
      if (protocol.planAhead && (await store.runPlan(runId)) === undefined) {
        const plan = protocol.planAhead({
          queries: await store.snapshotQueries(run.snapshotId),
          copilots: run.copilots,
          seed: run.config.seed,
          options: protocolOptions(protocol, run.config),
        });
        if (plan !== undefined) await store.putJudgeUnits(runId, [], plan);
      }
      const rubric = await requireRubric(deps, run);
      const callTimeoutMs = Math.max(...runJudges(run.config).map((j) => j.timeoutMs));
      const unitTimeoutMs = await withGroundingTimeout(
        deps,
        run,
        judgeUnitTimeoutMs(
          protocol,
          Math.max(1, run.copilots.length),
          protocolOptions(protocol, run.config),
          callTimeoutMs,
          rubric.judge.maxInvalidAnswers,
        ),
      );
      const stored = async (live: string[]) => (resumeFromStore ? { stored: await storedProgress(run, live) } : {});
      if (run.sourceRunId) return { unitTimeoutMs, live: [], imports: [], answered: true, ...(await stored([])) };
      const sources = new Map<string, string[]>();
      const live: string[] = [];
      for (const copilot of run.config.copilots) {
        const source = adapterFor(copilot.type).importSource?.(copilot);
        if (source === undefined) live.push(copilot.name);
        else sources.set(source, [...(sources.get(source) ?? []), copilot.name]);
      }
      return { unitTimeoutMs, live, imports: [...sources.values()], answered: false, ...(await stored(live)) };
    },

    /**
     * Some queries got more answers: plan the judge units those answers make ready (the protocol decides which) after
     * the units planned so far. Returns how many work items the run has now; the workflow judges the new ones.
     */
    async planReadyJudgeWork({ runId, queryIds }: { runId: string; queryIds: string[] }): Promise<{ planned: number }> {
      const run = await requireRun(deps, runId);
      const protocol = protocolFor(run.protocol);
      const plan = await store.runPlan(runId);
      const index = await snapshotIndex(run.snapshotId);
      const units: JudgeUnit[] = [];
      const grounding: JudgeUnit[] = [];
      const statuses = await responseStatusesOf(runId, run.copilots, queryIds);
      for (const queryId of queryIds) {
        const entry = index.get(queryId);
        if (!entry) throw new Error(`query ${queryId} is not in snapshot ${run.snapshotId}`);
        const responses = statuses.get(queryId) ?? [];
        units.push(
          ...protocol.readyUnits({
            query: entry.query,
            position: entry.position,
            responses,
            copilots: run.copilots,
            plan,
          }),
        );
        // Grounding checks need only their own response: ready as soon as it is in, whatever the protocol waits for.
        grounding.push(...groundingWorkItems(run, responses));
      }
      return { planned: await appendJudgeWork(run, units, grounding) };
    },
  };
}
