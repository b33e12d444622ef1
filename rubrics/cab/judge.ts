import { judgmentSlot, type JudgeContext } from '../../core/model/protocol';
import { splitScores } from '../../core/model/scoreSchema';
import type { JudgeUnit } from '../../core/model/store';
import { evaluationDateOf } from './options';
import type { StoredJudgment } from '../../core/model/types';
import { askOnce, DurableConversation, type TurnResult } from './conversation';
import {
  labelFor,
  rankingMessage,
  rankingSpec,
  REASONING_KEY,
  scoringMessage,
  scoringSpec,
  systemMessage,
  taxonomyMessages,
  taxonomySpec,
  type RankingAnswer,
  type ShownResponse,
} from './prompts';
import { asCabQuery } from './queries';
import type { CabRubric } from './rubric';

/**
 * Turn numbers of the stored conversation turns (ResultsStore.putJudgeTurn): 1..k score the responses in presentation order, k+1 is the ranking,
 * TAXONOMY_TURN + position are the independent error-taxonomy calls.
 */
export const TAXONOMY_TURN = 1000;

/** Keys in a judgment's rationales (besides the dimension ids) and scores (taxonomy flags). */
export const RANKING_RATIONALE = 'ranking';
export const RANKING_ERROR = 'ranking_error';
export const TAXONOMY_PREFIX = 'taxonomy.';
export const taxonomyKey = (flag: string) => `${TAXONOMY_PREFIX}${flag}`;
/** A score key holding an error-taxonomy flag (0/1), not a rubric dimension: never averaged or compared as one. */
export const isTaxonomyKey = (key: string) => key.startsWith(TAXONOMY_PREFIX);
export const TAXONOMY_ERROR = 'taxonomy_error';

type Scores = Record<string, { score: number } & Record<string, unknown>>;

/**
 * One query: every present copilot's response in ONE judge conversation, in the presentation order
 * (unit.copilots), then a ranking of all labels. Labels are mapped back to copilots only here, after
 * judging; the judge only ever sees "Response #k".
 */
export async function judgeCabUnit(unit: JudgeUnit, ctx: JudgeContext): Promise<{ judged: number; failed: number }> {
  const rubric = ctx.rubric as CabRubric;
  const { store, runId } = ctx;
  const existing = await Promise.all(
    unit.copilots.map((c) => store.getJudgment(runId, unit.queryId, c, rubric.version, ctx.slot)),
  );
  if (existing.every((j) => j !== null)) return tally(existing.map((j) => j!.status));

  const run = await store.getRun(runId);
  if (!run) throw new Error(`run ${runId} is not in the results store`);
  const evaluationDate = evaluationDateOf(ctx.options, run);
  const query = asCabQuery(await store.snapshotQuery(ctx.snapshotId, unit.queryId));
  const collected = await Promise.all(unit.copilots.map((copilot) => store.getResponse(runId, unit.queryId, copilot)));
  const shown: ShownResponse[] = unit.copilots.map((copilot, i) => {
    const r = collected[i];
    if (!r || r.status !== 'ok' || r.text === null)
      throw new Error(`no collected response for ${unit.queryId}/${copilot}`);
    // The reference sends no time of writing; it is shown only when the config asks for it (the blog's variant).
    return {
      label: labelFor(i + 1),
      text: r.text,
      timestamp: ctx.options.answerTimestamps === true ? r.finishedAt : null,
      context: r.context ?? query.context ?? null,
    };
  });
  const labels = shown.map((s) => s.label);
  const maxInvalid = rubric.judge.maxInvalidAnswers;

  const conversation = new DurableConversation(ctx, unit.queryId, maxInvalid);
  const scored: Array<TurnResult<Scores>> = [];
  for (const [i, s] of shown.entries()) {
    const add = [
      ...(i === 0 ? [systemMessage(rubric, evaluationDate)] : []),
      scoringMessage(rubric, query, s, evaluationDate),
    ];
    scored.push(await conversation.ask(i + 1, 'scoring', add, scoringSpec(rubric)));
  }
  // With one response there is nothing to rank; its rank stays null rather than a meaningless 1.
  const ranking: TurnResult<RankingAnswer> | null =
    shown.length > 1
      ? await conversation.ask(
          shown.length + 1,
          'ranking',
          [rankingMessage(rubric, query, labels, evaluationDate)],
          rankingSpec(labels),
        )
      : null;

  const taxonomy: Array<TurnResult<Scores> | null> = [];
  for (const [i, s] of shown.entries()) {
    // Asked for every collected response, as the reference does: a response whose scoring failed still gets its flags.
    const wanted = ctx.options.errorTaxonomy === true;
    taxonomy.push(
      wanted
        ? await askOnce(
            ctx,
            unit.queryId,
            TAXONOMY_TURN + i + 1,
            taxonomyMessages(rubric, query, s, evaluationDate),
            taxonomySpec(rubric),
            maxInvalid,
          )
        : null,
    );
  }

  const stamp = {
    model: ctx.judge.model,
    baseURL: ctx.judge.baseURL,
    temperature: ctx.judge.temperature,
    rubricVersion: rubric.version,
    seed: ctx.judge.seed ?? null,
  };
  const createdAt = new Date().toISOString();
  const judgments: StoredJudgment[] = unit.copilots.map((copilot, i) => {
    // The ranking covers every label shown, so a response whose scoring turn failed still gets its rank.
    const rank = ranking?.ok ? ranking.value.ranking.indexOf(labels[i]) + 1 : null;
    const judge = { ...stamp, systemFingerprint: scored[i].systemFingerprint };
    const base = {
      runId,
      queryId: unit.queryId,
      copilot,
      rubricVersion: rubric.version,
      position: i + 1,
      rank,
      judge,
      attempts: scored[i].attempts,
      createdAt,
      ...judgmentSlot(ctx.slot),
    };
    const turn = scored[i];
    const { scores, rationales } = turn.ok
      ? splitScores(turn.value, REASONING_KEY)
      : { scores: {} as Record<string, number>, rationales: {} as Record<string, string> };
    if (ranking?.ok) rationales[RANKING_RATIONALE] = ranking.value.rationale;
    if (ranking && !ranking.ok) rationales[RANKING_ERROR] = ranking.error;
    const tax = taxonomy[i];
    if (tax?.ok) {
      const flags = splitScores(tax.value, REASONING_KEY);
      for (const f of rubric.data.taxonomy) {
        scores[taxonomyKey(f.id)] = flags.scores[f.id];
        rationales[taxonomyKey(f.id)] = flags.rationales[f.id];
      }
    } else if (tax) rationales[TAXONOMY_ERROR] = tax.error;
    // A failed scoring turn is missing data: no dimension scores and no total; only its taxonomy flags, when checked.
    if (!turn.ok)
      return {
        ...base,
        status: 'failed',
        scores: tax?.ok ? scores : null,
        rationales: Object.keys(rationales).length ? rationales : null,
        total: null,
        error: turn.error,
      };
    // Stored: the sum of the four scores (as before); reports derive the headline, their mean, from the scores (score.ts).
    const total = rubric.data.dimensions.reduce((sum, d) => sum + scores[d.id], 0);
    return { ...base, status: 'ok', scores, rationales, total, error: null };
  });
  await store.putJudgments(judgments); // all of the conversation's verdicts, or none
  return tally(judgments.map((j) => j.status));
}

function tally(statuses: Array<StoredJudgment['status']>) {
  const judged = statuses.filter((s) => s === 'ok').length;
  return { judged, failed: statuses.length - judged };
}
