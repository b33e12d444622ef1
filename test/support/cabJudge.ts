import type { SimHandler } from '../../sim/server';
import { hashInt } from './judges';

/**
 * Reading CryptoAnalystBench judge requests the way an outside judge would: from the chat messages only.
 * Written independently of rubrics/cab so tests recompute figures without the code under test.
 */
export const schemaName = (body: any): string | undefined => body?.response_format?.json_schema?.name;
export const schemaOf = (body: any): any => body?.response_format?.json_schema?.schema;

const userMessages = (body: any): string[] =>
  body.messages.filter((m: any) => m.role === 'user').map((m: any) => String(m.content));

/** The user messages that present a response (not re-asks), in conversation order. */
export const scoringPrompts = (body: any): string[] =>
  userMessages(body).filter((c) => /^Evaluate Response #\d+/.test(c));

export function queryTextOf(body: any): string {
  for (const m of body.messages) {
    const found = String(m.content).match(/User query:\n<<<\n([\s\S]*?)\n>>>/);
    if (found) return found[1];
  }
  throw new Error('no query in judge request');
}

export function labelOf(prompt: string): string {
  return prompt.match(/^Evaluate (Response #\d+)/)![1];
}

export function responseTextOf(prompt: string): string {
  return prompt.match(/\nResponse #\d+:\n<<<\n([\s\S]*?)\n>>>/)![1];
}

/** Integer 3..7 from the graded text and dimension, plus a bonus for the FIRST response of the conversation. */
export function biasedScore(text: string, dim: string, first: boolean, bonus: number): number {
  return 3 + (hashInt(`${text}|${dim}`) % 5) + (first ? bonus : 0);
}

/** The answer a position-biased judge gives to a scoring turn. */
export function biasedScoring(body: any, bonus: number): Record<string, { score: number; reasoning: string }> {
  const prompts = scoringPrompts(body);
  const text = responseTextOf(prompts[prompts.length - 1]);
  const dims = Object.keys(schemaOf(body).properties);
  const first = prompts.length === 1;
  return Object.fromEntries(
    dims.map((d) => [d, { score: biasedScore(text, d, first, bonus), reasoning: `${d} ok${first ? ' (first)' : ''}` }]),
  );
}

/** Totals per label from the judge's own earlier answers in the conversation. */
export function totalsInConversation(body: any): Map<string, number> {
  const totals = new Map<string, number>();
  const messages = body.messages as Array<{ role: string; content: string }>;
  messages.forEach((m, i) => {
    if (m.role !== 'user' || !/^Evaluate Response #\d+/.test(m.content)) return;
    // The answer that counted is the last assistant message before the next scoring prompt.
    let answer: string | undefined;
    for (
      let k = i + 1;
      k < messages.length && !(messages[k].role === 'user' && /^Evaluate Response #\d+/.test(messages[k].content));
      k++
    )
      if (messages[k].role === 'assistant') answer = messages[k].content;
    try {
      const parsed = JSON.parse(answer ?? '') as Record<string, { score: number }>;
      totals.set(
        labelOf(m.content),
        Object.values(parsed).reduce((s, v) => s + v.score, 0),
      );
    } catch {
      totals.set(labelOf(m.content), -1);
    }
  });
  return totals;
}

/** Rank labels by the totals it gave, best first; ties go to the one it saw earlier. */
export function rankingByTotals(body: any): { ranking: string[]; rationale: string } {
  const labels: string[] = schemaOf(body).properties.ranking.items.enum;
  const totals = totalsInConversation(body);
  const ranking = labels
    .map((l, i) => ({ l, i, t: totals.get(l) ?? -1 }))
    .sort((a, b) => b.t - a.t || a.i - b.i)
    .map((x) => x.l);
  return { ranking, rationale: 'by totals' };
}

/** A CryptoAnalystBench judge that adds `bonus` per dimension to whatever it sees first and ranks by the totals it gave. */
export const firstFavouringJudge =
  (bonus: number): SimHandler =>
  (body) => {
    const name = schemaName(body);
    if (name === 'cab_scores') return JSON.stringify(biasedScoring(body, bonus));
    if (name === 'cab_ranking') return JSON.stringify(rankingByTotals(body));
    return undefined;
  };
