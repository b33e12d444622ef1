/**
 * The simulator's CryptoAnalystBench ranking turn: it ranks the responses by the scores it gave them earlier in the
 * same conversation (the mean of each response's four dimension scores, best first; ties keep the order they were
 * shown in), so the demo's ranking agrees with its own scores and is the same on every run.
 */

type Message = { role: string; content: string };

export const CAB_RANKING_SCHEMA = 'cab_ranking';

/** A scoring prompt names the response it presents near its start ("Evaluate Response #2 …", or the reference's wording). */
const SCORING = /^[^\n]*\bevaluate response #(\d+)/i;

/** Label → mean of the scores the judge gave it, from the last valid answer after each scoring prompt. */
export function scoresInConversation(messages: Message[]): Map<string, number> {
  const out = new Map<string, number>();
  let label: string | null = null;
  for (const m of messages) {
    const asked = m.role === 'user' ? SCORING.exec(m.content) : null;
    if (asked) label = `Response #${asked[1]}`;
    else if (m.role === 'assistant' && label) {
      try {
        const values = Object.values(JSON.parse(m.content) as Record<string, { score?: unknown }>).map((v) => v?.score);
        if (values.length && values.every((v) => typeof v === 'number'))
          out.set(label, (values as number[]).reduce((a, b) => a + b, 0) / values.length);
      } catch {
        // an invalid answer that was re-asked: the next one counts
      }
    }
  }
  return out;
}

export function cabRankingAnswer(schema: any, messages: Message[]): { ranking: string[]; rationale: string } {
  const labels: string[] = schema?.properties?.ranking?.items?.enum ?? [];
  const scores = scoresInConversation(messages);
  const ranking = labels
    .map((label, shown) => ({ label, shown, score: scores.get(label) ?? -Infinity }))
    .sort((a, b) => b.score - a.score || a.shown - b.shown)
    .map((x) => x.label);
  const described = ranking
    .map((l) => `${l} (${scores.has(l) ? scores.get(l)!.toFixed(2) : 'not scored'})`)
    .join(' > ');
  return { ranking, rationale: `Ordered by the mean of the four scores given above: ${described}.` };
}
