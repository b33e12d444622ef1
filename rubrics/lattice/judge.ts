import { askJson, type ChatMessage } from '../../core/llm/client';
import { judgmentSlot, type JudgeContext } from '../../core/model/protocol';
import { dimensionScoresSpec, splitScores } from '../../core/model/scoreSchema';
import { historyBlock } from '../../core/model/history';
import type { StoredJudgment } from '../../core/model/types';
import { renderTemplate, requireShown } from '../../core/model/prompts';
import { LATTICE_LEVELS, type LatticeRubric } from './rubric';
import { latticeScore } from './aggregate';
import { asLatticeQuery, type LatticeQuery } from './queries';

/** The dimensions a response is graded on: T16 gets only Refusal. */
export function dimensionsFor(rubric: LatticeRubric, task: string) {
  return task === rubric.data.refusalTask ? [rubric.data.refusal] : rubric.data.dimensions;
}

type ScoredDimension = LatticeRubric['data']['dimensions'][number];

/** Anchors print as "9–10", "8", "6–7", "≤5" (the reference's notation); the YAML keys are ASCII. */
const levelLabel = (level: string) => (level === '0-5' ? '≤5' : level.replace('-', '–'));

/**
 * One dimension as the judge reads it: what it asks, what belongs to another dimension, the evidence angles (D5), and
 * what each band of scores means. Rubric versions stored before anchors existed have only a description.
 */
export function dimensionText(d: Partial<ScoredDimension> & { id: string; name: string; description: string }): string {
  const lines = [`${d.id} ${d.name}: ${d.description}`];
  if (d.notJudgedHere) lines.push(`  Not judged here: ${d.notJudgedHere}`);
  if (d.evidenceAngles?.length)
    lines.push(
      '  Evidence angles (use those the task needs; no task needs all):',
      ...d.evidenceAngles.map((a) => `    - ${a}`),
    );
  // In band order, best first (an object's numeric-looking keys would otherwise come first).
  if (d.anchors)
    for (const level of LATTICE_LEVELS) if (d.anchors[level]) lines.push(`  ${levelLabel(level)}: ${d.anchors[level]}`);
  return lines.join('\n');
}

/** The category's score caps, as the judge reads them under the query's labels (empty when none applies). */
export function capsText(rubric: LatticeRubric, task: string, category: string): string {
  if (task === rubric.data.refusalTask) return '';
  const caps = (rubric.data.caps ?? []).filter((c) => c.category === category);
  return caps.map((c) => `Limit for this category: ${c.condition} (${c.dimension} ≤ ${c.max})\n`).join('');
}

/** One LATTICE judge call (independent or joint): an invalid answer is asked again afresh, up to the rubric's limit. */
export function askLatticeJudge<T>(
  ctx: JudgeContext,
  rubric: LatticeRubric,
  messages: ChatMessage[],
  spec: Parameters<typeof askJson<T>>[0]['spec'],
) {
  return askJson<T>({
    settings: ctx.judge,
    messages,
    spec,
    maxInvalidAnswers: rubric.judge.maxInvalidAnswers,
    retryIn: 'fresh',
    env: ctx.env,
    cache: ctx.cache,
    signal: ctx.signal,
    onCall: ctx.recordCall,
    beforeSend: ctx.beforeSend,
  });
}

const systemPrompts = new WeakMap<LatticeRubric, Map<string, string>>();

/**
 * The system prompt for a query of `task`: the scale, the rules that apply to it and its dimensions with their anchors.
 * Rendered once per rubric and task (it depends on nothing else), not once per judge call.
 */
export function latticeSystemPrompt(rubric: LatticeRubric, task: string): string {
  let byTask = systemPrompts.get(rubric);
  if (!byTask) systemPrompts.set(rubric, (byTask = new Map()));
  let prompt = byTask.get(task);
  if (prompt === undefined) byTask.set(task, (prompt = renderSystemPrompt(rubric, task)));
  return prompt;
}

function renderSystemPrompt(rubric: LatticeRubric, task: string): string {
  const d = rubric.data;
  return renderTemplate(
    rubric.prompts.system,
    {
      min: String(d.scale.min),
      max: String(d.scale.max),
      rules: (d.rules ?? [])
        .filter((r) => !(r.regularTasksOnly && task === d.refusalTask))
        .map((r) => `- ${r.text}`)
        .join('\n'),
      dimensions: dimensionsFor(rubric, task)
        .map((x) => (x.anchors ? dimensionText(x) : `- ${x.id} ${x.name}: ${x.description}`))
        .join('\n\n'),
    },
    `${rubric.dir}/${d.prompts.system}`,
  );
}

/** The judge sees the query, the task's name and description, labels and the response text — never which copilot wrote it. */
export function latticeMessages(rubric: LatticeRubric, query: LatticeQuery, responseText: string): ChatMessage[] {
  const d = rubric.data;
  const dims = dimensionsFor(rubric, query.task);
  const task = d.tasks.find((t) => t.id === query.task)!;
  const category = d.categories.find((c) => c.id === query.category)!;
  const system = latticeSystemPrompt(rubric, query.task);
  const user = renderTemplate(
    rubric.prompts.user,
    {
      task_id: task.id,
      task_name: task.name,
      task_description: task.description,
      category_id: category.id,
      category_name: category.name,
      category_description: category.description,
      caps: capsText(rubric, query.task, query.category),
      history: historyBlock(query.history),
      query: query.text,
      response: responseText,
      dimension_ids: dims.map((x) => x.id).join(', '),
    },
    `${rubric.dir}/${d.prompts.user}`,
  );
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

/** One independent judge call for one stored response; the verdict (or the failure) is written to the store. */
export async function judgeLatticeResponse(
  rubric: LatticeRubric,
  queryId: string,
  copilot: string,
  ctx: JudgeContext,
): Promise<'ok' | 'failed'> {
  const { store, runId } = ctx;
  const existing = await store.getJudgment(runId, queryId, copilot, rubric.version, ctx.slot);
  if (existing) return existing.status;
  const query = asLatticeQuery(await store.snapshotQuery(ctx.snapshotId, queryId));
  const response = await store.getResponse(runId, queryId, copilot);
  if (!response || response.status !== 'ok' || response.text === null)
    throw new Error(`no collected response for ${queryId}/${copilot}`);
  const dims = dimensionsFor(rubric, query.task);
  const { jsonSchema, zodSchema } = dimensionScoresSpec(
    dims.map((x) => x.id),
    rubric.data.scale.min,
    rubric.data.scale.max,
  );
  const answer = await askLatticeJudge(ctx, rubric, latticeMessages(rubric, query, response.text), {
    name: 'lattice_judgment',
    jsonSchema,
    zodSchema,
  });
  const base: Omit<StoredJudgment, 'status' | 'scores' | 'rationales' | 'total' | 'error'> = {
    runId,
    queryId,
    copilot,
    rubricVersion: rubric.version,
    rank: null,
    position: null,
    judge: {
      model: ctx.judge.model,
      baseURL: ctx.judge.baseURL,
      temperature: ctx.judge.temperature,
      rubricVersion: rubric.version,
      seed: ctx.judge.seed ?? null,
      systemFingerprint: answer.systemFingerprint,
    },
    attempts: answer.attempts,
    createdAt: new Date().toISOString(),
    ...judgmentSlot(ctx.slot),
  };
  if (!answer.ok) {
    await store.putJudgment({
      ...base,
      status: 'failed',
      scores: null,
      rationales: null,
      total: null,
      error: answer.error,
    });
    return 'failed';
  }
  const { scores, rationales } = splitScores(answer.value);
  await store.putJudgment({
    ...base,
    status: 'ok',
    scores,
    rationales,
    total: latticeScore(rubric.data, query, scores),
    error: null,
  });
  return 'ok';
}

/** Render the judge prompt once (a regular task and the refusal task) so a broken template fails when the rubric loads, not after collection. */
export function checkLatticePrompts(rubric: LatticeRubric): LatticeRubric {
  for (const [task, category] of [
    ['T1', 'C1'],
    ['T1', 'C2'],
    [rubric.data.refusalTask, 'C1'],
  ]) {
    const [, user] = latticeMessages(
      rubric,
      { id: 'sample', text: '<sample query>', task, category },
      '<sample response>',
    );
    requireShown(
      user.content,
      { '{{query}}': '<sample query>', '{{response}}': '<sample response>' },
      `${rubric.dir}/${rubric.data.prompts.user}`,
    );
  }
  return rubric;
}
