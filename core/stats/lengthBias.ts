/**
 * Does the judge reward length? Correlation between a response's length (words) and its score, per copilot
 * and for the judge over all copilots. A judge-level correlation mixes "longer answers are better" with
 * "the judge likes long answers"; the within-query figure compares answers to the same question only, which
 * removes the question's difficulty but not genuine quality differences between copilots.
 */
import { mean, pearson, spearman } from './stats';
import type { StoredJudgment, StoredResponse } from '../model/types';

export interface Correlation {
  n: number;
  /** Pearson r between words and score; null when undefined (n < 3 or a constant). */
  pearson: number | null;
  /** Spearman ρ (ranks, ties averaged). */
  spearman: number | null;
}

export interface LengthBias {
  measure: 'words';
  score: string;
  judge: Correlation & { withinQuery: number | null };
  copilots: Record<string, Correlation & { meanWords: number | null }>;
}

/** JavaScript's `\s` (WhiteSpace and LineTerminator): what separates words, as `text.split(/\s+/)` splits. */
function isSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

let spaceTable: Uint8Array | undefined;

/**
 * Words: runs of non-space characters (the count `text.split(/\s+/).filter(Boolean)` gives, without its arrays). A table
 * lookup per character and no branch on where a word starts: a report counts every answer's words (10 MB of text at
 * 1,200 × 4), and this is twice as fast as testing isSpace and branching (30 → 14 ms, 2026-12-04).
 */
export function wordCount(text: string): number {
  spaceTable ??= Uint8Array.from({ length: 0x10000 }, (_, code) => (isSpace(code) ? 1 : 0));
  const table = spaceTable;
  let words = 0;
  let previous = 1; // 1 after a space (or at the start), 0 within a word
  for (let i = 0; i < text.length; i++) {
    const space = table[text.charCodeAt(i)];
    words += previous & (space ^ 1);
    previous = space;
  }
  return words;
}

const finiteOrNull = (x: number) => (Number.isFinite(x) ? x : null);

function correlation(items: Array<{ words: number; score: number }>): Correlation {
  if (items.length < 3) return { n: items.length, pearson: null, spearman: null };
  const w = items.map((i) => i.words);
  const s = items.map((i) => i.score);
  return { n: items.length, pearson: finiteOrNull(pearson(w, s)), spearman: finiteOrNull(spearman(w, s)) };
}

/** Joins ok judgments to their responses' texts; `score` names the judgment field correlated (its total). */
export function lengthBias(
  judgments: Array<Pick<StoredJudgment, 'queryId' | 'copilot' | 'status' | 'total'>>,
  responses: Array<Pick<StoredResponse, 'queryId' | 'copilot' | 'status' | 'text'>>,
  copilots: string[],
  score: string,
): LengthBias {
  const key = (q: string, c: string) => `${q}\u0000${c}`;
  const textOf = new Map(
    responses.filter((r) => r.status === 'ok' && r.text !== null).map((r) => [key(r.queryId, r.copilot), r.text!]),
  );
  const scored = judgments
    .filter((j) => j.status === 'ok' && j.total !== null && textOf.has(key(j.queryId, j.copilot)))
    .map((j) => ({
      queryId: j.queryId,
      copilot: j.copilot,
      score: j.total!,
      words: wordCount(textOf.get(key(j.queryId, j.copilot))!),
    }));
  const byQuery = new Map<string, typeof scored>();
  for (const i of scored) byQuery.set(i.queryId, [...(byQuery.get(i.queryId) ?? []), i]);
  const centred = [...byQuery.values()]
    .filter((g) => g.length > 1)
    .flatMap((g) => {
      const mw = mean(g.map((i) => i.words));
      const ms = mean(g.map((i) => i.score));
      return g.map((i) => ({ words: i.words - mw, score: i.score - ms }));
    });
  const withinQuery =
    centred.length >= 3
      ? finiteOrNull(
          pearson(
            centred.map((c) => c.words),
            centred.map((c) => c.score),
          ),
        )
      : null;
  return {
    measure: 'words',
    score,
    judge: { ...correlation(scored), withinQuery },
    copilots: Object.fromEntries(
      copilots.map((c) => {
        const mine = scored.filter((i) => i.copilot === c);
        return [c, { ...correlation(mine), meanWords: mine.length ? mean(mine.map((i) => i.words)) : null }];
      }),
    ),
  };
}
