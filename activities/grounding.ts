import { JUDGE_UNIT_SLACK_MS, type ReadyResponse, type ReportInput } from '../core/model/protocol';
import { groundingReport, type GroundingReport } from '../core/grounding/report';
import { protocolFor } from '../rubrics';
import type { AnswerCache, CallUsage } from '../core/llm/client';
import type { JudgeSlot, JudgeUnit, RunRecord } from '../core/model/store';
import { workItems } from '../core/model/workItems';
import { judgeGroundingResponse, loadGroundingRubric } from '../rubrics/grounding';
import { groundingEndpoint, runGroundingRubric, runJudges, type ActivityDeps, type StoredRunConfig } from './deps';

type Run = RunRecord & { config: StoredRunConfig };

/** Judge calls of one grounding check at most: the claims, then their citations. */
const GROUNDING_CALLS = 2;

/**
 * The grounding work items of some stored responses: one per collected answer (and per panel member, keeping the
 * panel's item order), after the protocol's own. None when the run has no `grounding:`.
 */
export function groundingWorkItems(run: Run, responses: ReadyResponse[]): JudgeUnit[] {
  if (!run.config.grounding) return [];
  const units = responses
    .filter((r) => r.status === 'ok')
    .map((r): JudgeUnit => ({ queryId: r.queryId, copilots: [r.copilot], kind: 'grounding' }));
  return workItems(
    units,
    1,
    runJudges(run.config).map((j) => j.name),
  );
}

/** The grounding rubric of a new run, stored like a protocol's (under its own "protocol" name); returns its version. */
export async function storeGroundingRubric(deps: ActivityDeps, config: StoredRunConfig): Promise<string | undefined> {
  if (!config.grounding) return undefined;
  const rubric = loadGroundingRubric(config.grounding.rubric);
  await deps.store.putRubric(rubric.version, 'grounding', rubric.content);
  return rubric.version;
}

/** A judge work item's time bound must cover a grounding check too (every call re-asked up to the grounding rubric's limit). */
export async function withGroundingTimeout(deps: ActivityDeps, run: Run, unitTimeoutMs: number): Promise<number> {
  const rubric = await runGroundingRubric(deps, run);
  if (!rubric) return unitTimeoutMs;
  const callTimeoutMs = Math.max(
    run.config.grounding?.judge?.timeoutMs ?? 0,
    ...runJudges(run.config).map((j) => j.timeoutMs),
  );
  return Math.max(
    unitTimeoutMs,
    GROUNDING_CALLS * (1 + rubric.data.judge.maxInvalidAnswers) * callTimeoutMs + JUDGE_UNIT_SLACK_MS,
  );
}

/** Judge one grounding work item: its response's checks go to the store (or, for an answer that stays invalid, the failure). */
export async function judgeGroundingItem(
  deps: ActivityDeps,
  run: Run,
  unit: JudgeUnit,
  slot: JudgeSlot,
  io: {
    cache: AnswerCache;
    signal?: AbortSignal;
    recordCall: (name: string, usage: CallUsage) => Promise<void>;
    beforeSend?: () => Promise<void>;
  },
): Promise<{ judged: number; failed: number }> {
  const rubric = await runGroundingRubric(deps, run);
  if (!rubric) throw new Error(`run ${run.runId} has a grounding work item but no grounding rubric`);
  const who = groundingEndpoint(run, slot, rubric.data.judge.temperature);
  if (!who) return { judged: 0, failed: 0 }; // another panel member's item, while the grounding judge does the checks
  const reuse = run.config.grounding?.reuseAnswers !== false;
  const status = await judgeGroundingResponse(unit.queryId, unit.copilots[0], {
    store: deps.store,
    runId: run.runId,
    snapshotId: run.snapshotId,
    rubric,
    checks: run.config.grounding!.checks,
    judgeContextChars: run.config.grounding!.judgeContextChars,
    judge: who.endpoint,
    judgeName: who.judgeName,
    env: deps.env,
    cache: reuse ? io.cache : { ...io.cache, get: async () => null },
    signal: io.signal,
    recordCall: (usage) => io.recordCall(who.judgeName || who.endpoint.model, usage),
    beforeSend: io.beforeSend,
  });
  return status === 'failed' ? { judged: 0, failed: 1 } : { judged: 1, failed: 0 };
}

/** Every attempt of a grounding item crashed: the check is recorded as failed (missing data, never a verdict). */
export async function recordGroundingFailure(
  deps: ActivityDeps,
  run: Run,
  unit: JudgeUnit,
  slot: JudgeSlot,
  reason: string,
): Promise<void> {
  const rubric = await runGroundingRubric(deps, run);
  if (!rubric) return;
  const who = groundingEndpoint(run, slot, rubric.data.judge.temperature);
  if (!who) return;
  await deps.store.putGroundingCheck({
    runId: run.runId,
    queryId: unit.queryId,
    copilot: unit.copilots[0],
    groundingVersion: rubric.version,
    judgeName: who.judgeName,
    status: 'failed',
    label: null,
    claims: [],
    error: reason,
    judge: { model: who.endpoint.model, baseURL: who.endpoint.baseURL },
    attempts: 0,
    createdAt: new Date().toISOString(),
  });
}

/** report.json's `grounding` block from the store (null for a run without grounding checks). */
export async function groundingFigures(
  deps: ActivityDeps,
  run: Run,
  input: Pick<ReportInput, 'queries' | 'responses'>,
): Promise<GroundingReport | null> {
  const version = run.config.groundingVersion;
  if (!run.config.grounding || !version) return null;
  return groundingReport({
    groundingVersion: version,
    checks: run.config.grounding.checks,
    copilots: run.copilots,
    queries: input.queries,
    responses: input.responses,
    stored: await deps.store.groundingChecks(run.runId, version),
    labelsOf: protocolFor(run.protocol).labelsOf,
    seed: run.config.seed,
  });
}
