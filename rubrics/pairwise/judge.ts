import { z } from 'zod';
import { historyBlock } from '../../core/model/history';
import { askJson, type ChatMessage, type JsonAnswerSpec } from '../../core/llm/client';
import { judgmentSlot, type JudgeContext } from '../../core/model/protocol';
import { renderTemplate, requireShown } from '../../core/model/prompts';
import type { JudgeUnit } from '../../core/model/store';
import type { Query, StoredJudgment } from '../../core/model/types';
import type { PairwiseRubric } from './rubric';

/** Score keys: the one dimension (a response's share of points in its query) and one 0 / ½ / 1 outcome per opponent. */
export const PREFERENCE = 'preference';
export const OPPONENT_PREFIX = 'vs.';

/**
 * The pairs of a unit, each as [shown as A, shown as B]: every pair (i < j) of the unit's copilot order. The plan
 * reverses that order on every other query, so each copilot of a pair is shown first equally often (within one).
 */
export const pairsOf = (unit: Pick<JudgeUnit, 'copilots'>): Array<[string, string]> =>
  unit.copilots.flatMap((a, i) => unit.copilots.slice(i + 1).map((b): [string, string] => [a, b]));

type Preference = { preferred: 'A' | 'B' | 'tie'; rationale: string };

const preferenceSpec: JsonAnswerSpec<Preference> = {
  name: 'pairwise_preference',
  jsonSchema: {
    type: 'object',
    properties: { preferred: { type: 'string', enum: ['A', 'B', 'tie'] }, rationale: { type: 'string' } },
    required: ['preferred', 'rationale'],
    additionalProperties: false,
  },
  zodSchema: z.object({ preferred: z.enum(['A', 'B', 'tie']), rationale: z.string() }).strict(),
};

/** The judge sees the question and two unlabelled responses, never who wrote them. */
export function pairMessages(rubric: PairwiseRubric, query: Query, a: string, b: string): ChatMessage[] {
  const where = `${rubric.dir}/rubric.yaml`;
  return [
    {
      role: 'system',
      content: renderTemplate(rubric.data.prompts.system, { criterion: rubric.data.criterion }, where),
    },
    {
      role: 'user',
      content: renderTemplate(
        rubric.data.prompts.user,
        { history: historyBlock(query.history), query: query.text, response_a: a, response_b: b },
        where,
      ),
    },
  ];
}

/** A template that does not show both responses and the question fails when the rubric loads. */
export function checkPairwisePrompts(rubric: PairwiseRubric): PairwiseRubric {
  const [, user] = pairMessages(rubric, { id: 'sample', text: '<sample query>' }, '<sample A>', '<sample B>');
  requireShown(
    user.content,
    { '{{query}}': '<sample query>', '{{response_a}}': '<sample A>', '{{response_b}}': '<sample B>' },
    `${rubric.dir}/rubric.yaml`,
  );
  return rubric;
}

/** One query: one independent judge call per pair; each copilot's judgment holds its outcomes against the others. */
export async function judgePairwiseUnit(
  unit: JudgeUnit,
  ctx: JudgeContext,
): Promise<{ judged: number; failed: number }> {
  const rubric = ctx.rubric as PairwiseRubric;
  const { store, runId } = ctx;
  const existing = await Promise.all(
    unit.copilots.map((c) => store.getJudgment(runId, unit.queryId, c, rubric.version, ctx.slot)),
  );
  if (existing.every((j) => j !== null)) return tally(existing.map((j) => j!.status));

  const query = await store.snapshotQuery(ctx.snapshotId, unit.queryId);
  const texts = new Map<string, string>();
  for (const copilot of unit.copilots) {
    const r = await store.getResponse(runId, unit.queryId, copilot);
    if (!r || r.status !== 'ok' || r.text === null)
      throw new Error(`no collected response for ${unit.queryId}/${copilot}`);
    texts.set(copilot, r.text);
  }
  const text = (copilot: string) => texts.get(copilot)!;
  const outcomes = new Map<string, Record<string, { points: number; rationale: string }>>(
    unit.copilots.map((c) => [c, {}]),
  );
  const errors: string[] = [];
  let attempts = 0;
  let systemFingerprint: string | null | undefined;
  for (const [a, b] of pairsOf(unit)) {
    const answer = await askJson({
      settings: ctx.judge,
      messages: pairMessages(rubric, query, text(a), text(b)),
      spec: preferenceSpec,
      maxInvalidAnswers: rubric.judge.maxInvalidAnswers,
      retryIn: 'fresh',
      env: ctx.env,
      cache: ctx.cache,
      signal: ctx.signal,
      onCall: ctx.recordCall, // every protocol's judge calls are counted (cost, tokens-per-minute, header pacing)
      beforeSend: ctx.beforeSend,
    });
    attempts += answer.attempts;
    systemFingerprint ??= answer.systemFingerprint;
    if (!answer.ok) {
      errors.push(`${a} vs ${b}: ${answer.error}`);
      continue;
    }
    const pointsA = answer.value.preferred === 'A' ? 1 : answer.value.preferred === 'B' ? 0 : 0.5;
    outcomes.get(a)![b] = { points: pointsA, rationale: answer.value.rationale };
    outcomes.get(b)![a] = { points: 1 - pointsA, rationale: answer.value.rationale };
  }

  const base = {
    runId,
    queryId: unit.queryId,
    rubricVersion: rubric.version,
    rank: null,
    position: null,
    attempts,
    createdAt: new Date().toISOString(),
    ...judgmentSlot(ctx.slot),
  };
  const judge = {
    model: ctx.judge.model,
    baseURL: ctx.judge.baseURL,
    temperature: ctx.judge.temperature,
    rubricVersion: rubric.version,
    seed: ctx.judge.seed ?? null,
    systemFingerprint: systemFingerprint ?? null,
  };
  const judgments: StoredJudgment[] = unit.copilots.map((copilot) => {
    const mine = Object.entries(outcomes.get(copilot)!);
    if (!mine.length)
      return {
        ...base,
        copilot,
        judge,
        status: 'failed',
        scores: null,
        rationales: null,
        total: null,
        error: errors.join('; ') || 'no pair judged',
      };
    const preference = mine.reduce((sum, [, o]) => sum + o.points, 0) / mine.length;
    const scores = {
      [PREFERENCE]: preference,
      ...Object.fromEntries(mine.map(([o, x]) => [`${OPPONENT_PREFIX}${o}`, x.points])),
    };
    const rationales = Object.fromEntries(mine.map(([o, x]) => [`${OPPONENT_PREFIX}${o}`, x.rationale]));
    return { ...base, copilot, judge, status: 'ok', scores, rationales, total: preference, error: null };
  });
  await store.putJudgments(judgments); // every copilot of the query at once: a crash never leaves half a unit judged
  return tally(judgments.map((j) => j.status));
}

function tally(statuses: Array<StoredJudgment['status']>) {
  const judged = statuses.filter((s) => s === 'ok').length;
  return { judged, failed: statuses.length - judged };
}
