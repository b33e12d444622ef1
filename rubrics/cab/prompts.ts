import { z } from 'zod';
import type { ChatMessage, JsonAnswerSpec } from '../../core/llm/client';
import { historyBlock } from '../../core/model/history';
import { dimensionScoresSpec } from '../../core/model/scoreSchema';
import type { Query } from '../../core/model/types';
import { fenced, renderTemplate, requireShown } from '../../core/model/prompts';
import type { CabRubric } from './rubric';

/** What one turn shows about one response. Never the copilot's name: only its label. */
export interface ShownResponse {
  label: string;
  text: string;
  /** When the response was produced (the stored response's finishedAt). */
  timestamp: string | null;
  /** Context that was available to the copilot (its own, else the query's). */
  context: string | null;
}

/** The judge's label for the response in position k (1-based). */
export const labelFor = (position: number) => `Response #${position}`;

/** Per-dimension answers are `{score, reasoning}`, as in the reference harness. */
export const REASONING_KEY = 'reasoning';

function contextBlock(context: string | null, rubric?: CabRubric): string {
  if (!context?.trim()) return '';
  if (rubric?.prompts.contextBlock)
    return renderTemplate(rubric.prompts.contextBlock, { context }, `${rubric.dir}: context block`);
  // No "response" on this heading line: judges (and the simulator) read blocks under such a heading as the graded text.
  return `\nContext that was available to the system when it answered (judge factual claims against this context, not against your own knowledge):\n${fenced(context)}\n`;
}

/** The expected JSON spelled out, for judges that do not honour json_schema (or run with responseFormat json_object). */
function scoresFormat(ids: string[], min: number, max: number): string {
  return `{\n${ids.map((id) => `  "${id}": {"score": <integer ${min}-${max}>, "${REASONING_KEY}": "<brief reasoning>"}`).join(',\n')}\n}`;
}

function where(rubric: CabRubric, key: keyof CabRubric['data']['prompts']): string {
  return `${rubric.dir}/${rubric.data.prompts[key]}`;
}

/**
 * The four dimensions with every criterion, numbered in the rubric's order (the reference's: temporal relevance, data
 * consistency, depth, relevance). The system message, every scoring turn and the ranking turn carry it, as the
 * reference's prompts do.
 */
export function criteriaBlock(rubric: CabRubric, withScale = true): string {
  const d = rubric.data;
  const scale = withScale ? ` (${d.scale.min}-${d.scale.max})` : '';
  return d.dimensions
    .map(
      (x, i) =>
        `${i + 1}. ${x.name.toUpperCase()} [${x.id}]${scale}: ${x.description}\n${x.criteria.map((c) => `   - ${c}`).join('\n')}`,
    )
    .join('\n\n');
}

export function systemMessage(rubric: CabRubric, evaluationDate: string): ChatMessage {
  const d = rubric.data;
  const content = renderTemplate(
    rubric.prompts.system,
    {
      evaluation_date: evaluationDate,
      min: String(d.scale.min),
      max: String(d.scale.max),
      dimensions: criteriaBlock(rubric),
    },
    where(rubric, 'system'),
  );
  return { role: 'system', content };
}

/** A flag with its meaning, typical symptoms and how to check it; older rubric versions carry one description. */
function flagBlock(f: CabRubric['data']['taxonomy'][number], i: number): string {
  if (!f.meaning) return `${i + 1}. ${f.id} (${f.name}): ${f.description ?? ''}`;
  return [
    `${i + 1}. ${f.name} [${f.id}]`,
    `What it means: ${f.meaning}`,
    'Typical symptoms:',
    ...(f.symptoms ?? []).map((x) => `- ${x}`),
    `How to check: ${f.check ?? ''}`,
  ].join('\n');
}

/** What both the scoring turn and the taxonomy check show about one response. */
function responseVars(
  query: Query,
  shown: Omit<ShownResponse, 'label'>,
  evaluationDate: string,
  subject: string,
  rubric: CabRubric,
) {
  return {
    evaluation_date: evaluationDate,
    // Only a known time is stated: a made-up one (e.g. when a CSV was imported) would skew temporal relevance.
    response_written: shown.timestamp ? `${subject} was written at: ${shown.timestamp}` : '',
    response_timestamp: shown.timestamp ?? 'unknown',
    history: historyBlock(query.history),
    query: query.text,
    context: contextBlock(shown.context, rubric),
    response: shown.text,
  };
}

export function scoringMessage(
  rubric: CabRubric,
  query: Query,
  shown: ShownResponse,
  evaluationDate: string,
): ChatMessage {
  const d = rubric.data;
  const content = renderTemplate(
    rubric.prompts.scoring,
    {
      label: shown.label,
      position: shown.label.replace(/^Response #/, ''),
      ...responseVars(query, shown, evaluationDate, shown.label, rubric),
      min: String(d.scale.min),
      max: String(d.scale.max),
      criteria: criteriaBlock(rubric),
      dimension_ids: d.dimensions.map((x) => x.id).join(', '),
      answer_format: scoresFormat(
        d.dimensions.map((x) => x.id),
        d.scale.min,
        d.scale.max,
      ),
    },
    where(rubric, 'scoring'),
  );
  return { role: 'user', content };
}

export function rankingMessage(rubric: CabRubric, query: Query, labels: string[], evaluationDate: string): ChatMessage {
  const content = renderTemplate(
    rubric.prompts.ranking,
    {
      count: String(labels.length),
      labels: labels.join(', '),
      evaluation_date: evaluationDate,
      query: query.text,
      criteria: criteriaBlock(rubric, false),
      dimension_ids: rubric.data.dimensions.map((x) => x.id).join(', '),
      // Placeholders, not the labels in order: an example order could itself anchor the judge.
      answer_format: `{"ranking": ["<best label>", …, "<worst label>"] (all ${labels.length} labels, each once), "rationale": "<overall rationale for the order>"}`,
    },
    where(rubric, 'ranking'),
  );
  return { role: 'user', content };
}

export function taxonomyMessages(
  rubric: CabRubric,
  query: Query,
  shown: Omit<ShownResponse, 'label'>,
  evaluationDate: string,
): ChatMessage[] {
  const flags = rubric.data.taxonomy.map(flagBlock).join('\n\n');
  const user = renderTemplate(
    rubric.prompts.taxonomy,
    {
      ...responseVars(query, shown, evaluationDate, 'The response', rubric),
      flags,
      answer_format: scoresFormat(
        rubric.data.taxonomy.map((f) => f.id),
        0,
        1,
      ),
    },
    where(rubric, 'taxonomy'),
  );
  return [
    { role: 'system', content: renderTemplate(rubric.prompts.taxonomySystem, {}, where(rubric, 'taxonomySystem')) },
    { role: 'user', content: user },
  ];
}

type ScoreAnswer = Record<string, { score: number } & Record<string, unknown>>;

export function scoringSpec(rubric: CabRubric): JsonAnswerSpec<ScoreAnswer> {
  const { jsonSchema, zodSchema } = dimensionScoresSpec(
    rubric.data.dimensions.map((x) => x.id),
    rubric.data.scale.min,
    rubric.data.scale.max,
    REASONING_KEY,
  );
  return { name: 'cab_scores', jsonSchema, zodSchema };
}

export function taxonomySpec(rubric: CabRubric): JsonAnswerSpec<ScoreAnswer> {
  const { jsonSchema, zodSchema } = dimensionScoresSpec(
    rubric.data.taxonomy.map((x) => x.id),
    0,
    1,
    REASONING_KEY,
  );
  return { name: 'cab_error_taxonomy', jsonSchema, zodSchema };
}

export interface RankingAnswer {
  ranking: string[];
  rationale: string;
}

/**
 * A ranking is an array of exactly the labels shown, best first. The JSON schema already says
 * "k items from these k labels"; only the check can say "each exactly once".
 */
export function rankingSpec(labels: string[]): JsonAnswerSpec<RankingAnswer> {
  const k = labels.length;
  const jsonSchema = {
    type: 'object',
    properties: {
      ranking: { type: 'array', items: { type: 'string', enum: labels }, minItems: k, maxItems: k },
      rationale: { type: 'string' },
    },
    required: ['ranking', 'rationale'],
    additionalProperties: false,
  };
  const zodSchema = z.object({
    ranking: z.array(z.enum(labels as [string, ...string[]])).length(k),
    rationale: z.string(),
  }) as unknown as z.ZodType<RankingAnswer>;
  const check = (value: RankingAnswer): string | null => {
    const seen = new Set(value.ranking);
    if (seen.size === k) return null;
    const missing = labels.filter((l) => !seen.has(l));
    const twice = labels.filter((l) => value.ranking.filter((x) => x === l).length > 1);
    return `the ranking must list each of ${labels.join(', ')} exactly once; ${twice.join(', ')} ${twice.length === 1 ? 'appears' : 'appear'} more than once and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing`;
  };
  return { name: 'cab_ranking', jsonSchema, zodSchema, check };
}

/** Render every prompt once with sample values so a broken template fails when the rubric loads, not after collection. */
export function checkCabPrompts(rubric: CabRubric): CabRubric {
  const query: Query = { id: 'sample', text: '<sample query>' };
  systemMessage(rubric, '2026-01-01');
  const shown = { label: labelFor(1), text: '<sample response>', timestamp: null, context: null };
  const samples = { '{{query}}': '<sample query>', '{{response}}': '<sample response>' };
  requireShown(scoringMessage(rubric, query, shown, '2026-01-01').content, samples, where(rubric, 'scoring'));
  requireShown(
    rankingMessage(rubric, query, [labelFor(1), labelFor(2)], '2026-01-01').content,
    { '{{labels}}': labelFor(2) },
    where(rubric, 'ranking'),
  );
  requireShown(
    taxonomyMessages(rubric, query, shown, '2026-01-01')
      .map((m) => m.content)
      .join('\n'),
    samples,
    where(rubric, 'taxonomy'),
  );
  return rubric;
}
