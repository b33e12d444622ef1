import {
  askJson,
  type AnswerCache,
  type CallUsage,
  type ChatMessage,
  type JsonAnswer,
  type JsonAnswerSpec,
  type ModelEndpoint,
} from '../../core/llm/client';
import { historyBlock } from '../../core/model/history';
import { renderTemplate } from '../../core/model/prompts';
import type { ResultsStore } from '../../core/model/store';
import type { AnswerSource, Query } from '../../core/model/types';
import {
  evidenceText,
  type GroundingCheckName,
  type GroundingClaim,
  type GroundingJudgeStated,
  type GroundingLabel,
  type StoredGroundingCheck,
} from '../../core/grounding/checks';
import type { GroundingPromptName, GroundingRubric } from './rubric';
import { citationsSpec, extractionSpec, hallucinationSpec } from './schemas';

export interface GroundingJudgeContext {
  store: ResultsStore;
  runId: string;
  snapshotId: string;
  rubric: GroundingRubric;
  checks: GroundingCheckName[];
  /** Context shown to the judge per response (config grounding.judgeContextChars); default the rubric's maxContextChars. */
  judgeContextChars?: number | 'whole';
  judge: ModelEndpoint;
  /** The panel member whose work item this is ('' for a single judge); keys the stored check. */
  judgeName: string;
  env: NodeJS.ProcessEnv;
  cache?: AnswerCache;
  signal?: AbortSignal;
  recordCall?: (usage: CallUsage) => void | Promise<void>;
  /** Awaited before each judge request is sent: the work item's send time. */
  beforeSend?: () => Promise<void>;
}

function cut(text: string, max: number): string {
  return text.length <= max
    ? text
    : `${text.slice(0, max)}\n[… ${text.length - max} more characters of context not shown]`;
}

function sourcesBlock(sources: AnswerSource[]): string {
  return sources
    .map((s, i) =>
      [`[${s.id ?? String(i + 1)}]${s.title ? ` ${s.title}` : ''}${s.url ? ` <${s.url}>` : ''}`, s.text?.trim() ?? '']
        .filter(Boolean)
        .join('\n'),
    )
    .join('\n\n');
}

/**
 * The messages of one grounding prompt. Blind like every judge call: the query, one response and that copilot's own
 * context or sources, never the copilot's name.
 */
export function groundingMessages(
  rubric: GroundingRubric,
  prompt: GroundingPromptName,
  query: Query,
  vars: Record<string, string>,
): ChatMessage[] {
  const where = `${rubric.dir}/${rubric.data.prompts[prompt].user}`;
  const all = { history: historyBlock(query.history), query: query.text, ...vars };
  return [
    {
      role: 'system',
      content: renderTemplate(
        rubric.prompts[prompt].system,
        all,
        `${rubric.dir}/${rubric.data.prompts[prompt].system}`,
      ),
    },
    { role: 'user', content: renderTemplate(rubric.prompts[prompt].user, all, where) },
  ];
}

/** A response's label from its verification rate (rubric `labels`); null when it makes no claim at all. */
export function labelOf(rubric: GroundingRubric, claims: Pick<GroundingClaim, 'status'>[]): GroundingLabel | null {
  if (!claims.length) return null;
  const rate = claims.filter((c) => c.status === 'exact' || c.status === 'derivable').length / claims.length;
  return rate >= rubric.data.labels.factual
    ? 'factual'
    : rate >= rubric.data.labels.partial
      ? 'partial'
      : 'hallucinated';
}

/**
 * The grounding checks of one stored response, stored with every claim. Two judge calls at most — the claims (verified
 * against the context, or only listed when there is none), then their citations against the sources — each kept as a
 * judge turn, so a retried check resumes after the call that finished. A check already stored is left as it is.
 */
export async function judgeGroundingResponse(
  queryId: string,
  copilot: string,
  ctx: GroundingJudgeContext,
): Promise<StoredGroundingCheck['status']> {
  const { store, runId, rubric } = ctx;
  const existing = await store.getGroundingCheck(runId, queryId, copilot, rubric.version, ctx.judgeName);
  if (existing) return existing.status;
  const query = await store.snapshotQuery(ctx.snapshotId, queryId);
  const response = await store.getResponse(runId, queryId, copilot);
  if (!response || response.status !== 'ok' || response.text === null)
    throw new Error(`no collected response for ${queryId}/${copilot}`);
  const evidence = evidenceText(response.context, response.sources);
  // Turns are keyed like a protocol's, under a name of their own per response.
  const turnKey = `grounding:${rubric.version}:${copilot}`;
  const slot = { sample: 0, judge: ctx.judgeName };
  const turns = await store.judgeTurns(runId, queryId, turnKey, slot);
  let attempts = 0;

  async function ask<T>(turn: number, messages: ChatMessage[], spec: JsonAnswerSpec<T>): Promise<JsonAnswer<T>> {
    const done = turns.find((t) => t.turn === turn);
    if (done) {
      const value = spec.zodSchema.parse(JSON.parse(done.answer));
      return { ok: true, value, raw: done.answer, attempts: 0, messages, systemFingerprint: null };
    }
    const answer = await askJson({
      settings: ctx.judge,
      messages,
      spec,
      maxInvalidAnswers: rubric.data.judge.maxInvalidAnswers,
      retryIn: 'fresh',
      env: ctx.env,
      cache: ctx.cache,
      signal: ctx.signal,
      onCall: ctx.recordCall,
      beforeSend: ctx.beforeSend,
    });
    attempts += answer.attempts;
    if (answer.ok)
      await store.putJudgeTurn(
        runId,
        queryId,
        turnKey,
        turn,
        { messages, schema: spec.name },
        JSON.stringify(answer.value),
        slot,
      );
    return answer;
  }

  const base = {
    runId,
    queryId,
    copilot,
    groundingVersion: rubric.version,
    judgeName: ctx.judgeName,
    judge: { model: ctx.judge.model, baseURL: ctx.judge.baseURL },
  };
  const failed = async (error: string): Promise<'failed'> => {
    await store.putGroundingCheck({
      ...base,
      status: 'failed',
      label: null,
      claims: [],
      error,
      attempts,
      createdAt: new Date().toISOString(),
    });
    return 'failed';
  };

  let claims: GroundingClaim[];
  const limit = ctx.judgeContextChars ?? rubric.data.maxContextChars;
  const stated: GroundingJudgeStated = {
    hallucinationLabel: null,
    verificationRatePercent: null,
    citationLabel: null,
    sameTopicClaims: [],
    contextShown: null,
  };
  // The citation check alone needs the claims but not their verdicts: then they are only listed.
  if (evidence !== null && ctx.checks.includes('hallucination')) {
    const shown = limit === 'whole' ? evidence : cut(evidence, limit);
    if (limit !== 'whole' && evidence.length > limit) stated.contextShown = { chars: limit, of: evidence.length };
    const answer = await ask(
      1,
      groundingMessages(rubric, 'hallucination', query, { context: shown, response: response.text }),
      hallucinationSpec,
    );
    if (!answer.ok) return failed(answer.error);
    claims = answer.value.claims.map(({ sameTopic, ...c }, index) => ({ index, ...c, citation: null }));
    stated.hallucinationLabel = answer.value.label;
    stated.verificationRatePercent = answer.value.verificationRate;
    stated.sameTopicClaims = answer.value.claims.flatMap((c, i) => (c.sameTopic ? [i] : []));
  } else {
    const answer = await ask(
      1,
      groundingMessages(rubric, 'extraction', query, { response: response.text }),
      extractionSpec,
    );
    if (!answer.ok) return failed(answer.error);
    claims = answer.value.claims.map((c, index) => ({
      index,
      ...c,
      status: 'unchecked',
      excerpt: null,
      citation: null,
    }));
  }

  const sources = response.sources ?? [];
  if (ctx.checks.includes('citations') && sources.length && claims.length) {
    const list = claims.map((c, i) => `${i + 1}. ${c.text}`).join('\n');
    const answer = await ask(
      2,
      groundingMessages(rubric, 'citations', query, {
        sources: sourcesBlock(sources),
        response: response.text,
        claims: list,
      }),
      citationsSpec(claims.length),
    );
    if (!answer.ok) return failed(answer.error);
    for (const c of answer.value.claims) claims[c.claim - 1].citation = { source: c.source, verdict: c.verdict };
    stated.citationLabel = answer.value.label;
  }

  const status = evidence === null ? 'no_context' : 'ok';
  const verified = claims.filter((c) => c.status !== 'unchecked');
  await store.putGroundingCheck({
    ...base,
    status,
    label: status === 'ok' ? labelOf(rubric, verified) : null,
    claims,
    error: null,
    attempts,
    createdAt: new Date().toISOString(),
    stated,
  });
  return status;
}
