import { askJson, parseJsonAnswer, type ChatMessage, type JsonAnswerSpec } from '../../core/llm/client';
import type { JudgeContext } from '../../core/model/protocol';

/** What is stored per judge turn (its request, ResultsStore.putJudgeTurn); the turn's final answer is stored beside it. */
export interface StoredTurn {
  kind: 'scoring' | 'ranking' | 'taxonomy';
  /** Messages this turn added to the conversation: its user message plus any re-ask exchanges, without the final answer. */
  messages: ChatMessage[];
  ok: boolean;
  attempts: number;
  error: string | null;
  /** The provider's system_fingerprint for this turn's answer, when it returned one. */
  systemFingerprint?: string | null;
}

export type TurnResult<T> = (
  { ok: true; value: T; attempts: number } | { ok: false; error: string; attempts: number }
) & { systemFingerprint: string | null };

/**
 * A judge conversation that survives crashes. Every finished turn is written to the store before the
 * next one starts; a retried activity replays stored turns instead of asking again, so the judge is
 * never asked a finished turn twice and sees exactly the messages it would have seen without the crash.
 * Invalid answers are re-asked inside the conversation (askJson, retryIn 'conversation'); those
 * exchanges stay part of the conversation, as they were for the judge.
 */
export class DurableConversation {
  private messages: ChatMessage[] = [];
  private stored: Map<number, { request: unknown; answer: string }> | null = null;

  constructor(
    private readonly ctx: JudgeContext,
    private readonly queryId: string,
    private readonly maxInvalidAnswers: number,
  ) {}

  private async load() {
    return new Map(
      (await this.ctx.store.judgeTurns(this.ctx.runId, this.queryId, this.ctx.rubric.version, this.ctx.slot)).map(
        (t) => [t.turn, t],
      ),
    );
  }

  /** Turn `n` (1-based) appends `add` and asks for JSON; answered from the store when it finished before. */
  async ask<T>(
    n: number,
    kind: StoredTurn['kind'],
    add: ChatMessage[],
    spec: JsonAnswerSpec<T>,
  ): Promise<TurnResult<T>> {
    this.stored ??= await this.load();
    if (!this.stored.has(n)) {
      const answer = await askJson({
        settings: this.ctx.judge,
        messages: [...this.messages, ...add],
        spec,
        maxInvalidAnswers: this.maxInvalidAnswers,
        retryIn: 'conversation',
        env: this.ctx.env,
        cache: this.ctx.cache,
        signal: this.ctx.signal,
        onCall: this.ctx.recordCall,
        beforeSend: this.ctx.beforeSend,
      });
      // askJson returns the conversation ending in the final answer (ok) or in the last invalid answer plus an
      // unsent re-ask (failure); the conversation goes on from that last answer either way.
      const end = answer.ok ? answer.messages.length - 1 : answer.messages.length - 2;
      const turn: StoredTurn = {
        kind,
        messages: answer.messages.slice(this.messages.length, end),
        ok: answer.ok,
        attempts: answer.attempts,
        error: answer.ok ? null : answer.error,
        systemFingerprint: answer.systemFingerprint,
      };
      await this.ctx.store.putJudgeTurn(
        this.ctx.runId,
        this.queryId,
        this.ctx.rubric.version,
        n,
        turn,
        answer.messages[end]?.content ?? '',
        this.ctx.slot,
      );
      // First write wins: if a stale attempt of this activity stored the turn first, continue from ITS answer.
      this.stored = await this.load();
    }
    const { request, answer } = this.stored.get(n)!;
    const turn = request as StoredTurn;
    this.messages = [...this.messages, ...turn.messages, { role: 'assistant', content: answer }];
    return turnResult<T>(turn, answer);
  }
}

/** An independent single call (no shared conversation), stored like a turn so a retried activity does not ask again. */
export async function askOnce<T>(
  ctx: JudgeContext,
  queryId: string,
  n: number,
  messages: ChatMessage[],
  spec: JsonAnswerSpec<T>,
  maxInvalidAnswers: number,
): Promise<TurnResult<T>> {
  const version = ctx.rubric.version;
  const find = async () =>
    (await ctx.store.judgeTurns(ctx.runId, queryId, version, ctx.slot)).find((t) => t.turn === n);
  if (!(await find())) {
    const answer = await askJson({
      settings: ctx.judge,
      messages,
      spec,
      maxInvalidAnswers,
      retryIn: 'fresh',
      env: ctx.env,
      cache: ctx.cache,
      signal: ctx.signal,
      onCall: ctx.recordCall,
      beforeSend: ctx.beforeSend,
    });
    const turn: StoredTurn = {
      kind: 'taxonomy',
      messages,
      ok: answer.ok,
      attempts: answer.attempts,
      error: answer.ok ? null : answer.error,
      systemFingerprint: answer.systemFingerprint,
    };
    await ctx.store.putJudgeTurn(ctx.runId, queryId, version, n, turn, answer.ok ? answer.raw : '', ctx.slot);
  }
  const { request, answer } = (await find())!;
  return turnResult<T>(request as StoredTurn, answer);
}

function turnResult<T>(turn: StoredTurn, answer: string): TurnResult<T> {
  const systemFingerprint = turn.systemFingerprint ?? null;
  return turn.ok
    ? { ok: true, value: parseJsonAnswer(answer) as T, attempts: turn.attempts, systemFingerprint }
    : { ok: false, error: turn.error ?? 'invalid answer', attempts: turn.attempts, systemFingerprint };
}
