import { seededRandom, shuffled } from '../stats/random';
import { groupNearDuplicates, normalizeText } from './text';
import type { Query, StoredJudgment } from '../model/types';

/**
 * The pure parts of CryptoAnalystBench-style curation (filter → categorise → distil → prune → curate).
 * Deterministic: the same input and seed always give the same snapshot.
 */

/** Length in characters as a reader counts them (code points, not UTF-16 units). */
export const charLength = (s: string) => [...s].length;

/** Stage 1: drop queries too short to be a real question, or too long to be one (pasted documents, logs). */
export function filterByLength<T extends { query: string }>(
  items: T[],
  minChars: number,
  maxChars: number,
): { kept: T[]; tooShort: number; tooLong: number } {
  const kept: T[] = [];
  let tooShort = 0;
  let tooLong = 0;
  for (const item of items) {
    const n = charLength(item.query);
    if (n < minChars) tooShort++;
    else if (n > maxChars) tooLong++;
    else kept.push(item);
  }
  return { kept, tooShort, tooLong };
}

/**
 * Stage 3: collapse near-duplicates (same template, e.g. "What's up with POL" / "What's up with BELDEX", or similar text)
 * into one representative per group: the group's first query in traffic order, which keeps its own tag.
 */
export function distil<T extends { query: string }>(
  items: T[],
  threshold: number,
): { kept: Array<T & { groupSize: number }>; groups: number } {
  const groups = groupNearDuplicates(
    items.map((i) => i.query),
    { threshold, byTemplate: true },
  );
  return { kept: groups.map((g) => ({ ...items[g[0]], groupSize: g.length })), groups: groups.length };
}

/**
 * Stage 4: the queries of an earlier run on which every copilot scored above the threshold ("easy": they no longer
 * separate copilots). Returns their normalised texts. `mean` is the mean of a judgment's dimension scores (score keys the
 * run's protocol calls flags, such as CryptoAnalystBench's error taxonomy, are left out), `total` the protocol's stored
 * total (LATTICE 0–100, CryptoAnalystBench 4–40).
 */
export function easyQueryTexts(args: {
  queries: Query[];
  judgments: StoredJudgment[];
  copilots: string[];
  threshold: number;
  metric: 'mean' | 'total';
  isDimension: (scoreKey: string) => boolean;
}): Set<string> {
  const byQuery = new Map<string, Map<string, number>>();
  for (const j of args.judgments) {
    if (j.status !== 'ok') continue;
    const values = j.scores
      ? Object.entries(j.scores)
          .filter(([k]) => args.isDimension(k))
          .map(([, v]) => v)
      : [];
    const score =
      args.metric === 'total' ? j.total : values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
    if (score === null) continue;
    let perCopilot = byQuery.get(j.queryId);
    if (!perCopilot) byQuery.set(j.queryId, (perCopilot = new Map()));
    perCopilot.set(j.copilot, score);
  }
  const easy = new Set<string>();
  for (const q of args.queries) {
    const perCopilot = byQuery.get(q.id);
    // Every copilot must have a score: a copilot that failed on a query says nothing about its difficulty.
    if (
      perCopilot &&
      args.copilots.length > 0 &&
      args.copilots.every((s) => (perCopilot.get(s) ?? -Infinity) > args.threshold)
    )
      easy.add(normalizeText(q.text));
  }
  return easy;
}

/**
 * Largest-remainder (Hamilton) apportionment of `total` seats by `weights`, each category capped at its capacity.
 * Without binding caps every allocation is within one of its exact share total × weight / Σweights.
 * Ties go to the category listed first, so the result is deterministic.
 */
export function allocate(
  total: number,
  weights: Record<string, number>,
  capacity: Record<string, number>,
): Record<string, number> {
  const names = Object.keys(weights);
  const alloc: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const available = names.reduce((s, n) => s + (capacity[n] ?? 0), 0);
  if (available <= total) {
    for (const n of names) alloc[n] = capacity[n] ?? 0;
    return alloc;
  }
  let open = names.filter((n) => (capacity[n] ?? 0) > 0 && weights[n] > 0);
  let seats = total;
  // Categories whose quota exceeds what is available get everything they have; the rest is re-apportioned.
  for (;;) {
    const quota = hamilton(seats, open, weights);
    const over = open.filter((n) => quota[n] > (capacity[n] ?? 0));
    if (!over.length) {
      for (const n of open) alloc[n] = quota[n];
      break;
    }
    for (const n of over) {
      alloc[n] = capacity[n] ?? 0;
      seats -= alloc[n];
    }
    open = open.filter((n) => !over.includes(n));
    if (!open.length) break;
  }
  // Zero-weight categories only fill seats nobody else can (when weighted ones run out).
  let left = total - names.reduce((s, n) => s + alloc[n], 0);
  for (const n of names) {
    if (left <= 0) break;
    const extra = Math.min(left, (capacity[n] ?? 0) - alloc[n]);
    alloc[n] += extra;
    left -= extra;
  }
  return alloc;
}

function hamilton(seats: number, names: string[], weights: Record<string, number>): Record<string, number> {
  const sum = names.reduce((s, n) => s + weights[n], 0);
  const exact = names.map((n) => (sum > 0 ? (seats * weights[n]) / sum : 0));
  const out: Record<string, number> = {};
  names.forEach((n, k) => (out[n] = Math.floor(exact[k])));
  let left = seats - names.reduce((s, n) => s + out[n], 0);
  const order = names
    .map((n, k) => ({ n, k, r: exact[k] - Math.floor(exact[k]) }))
    .sort((x, y) => y.r - x.r || x.k - y.k);
  for (const { n } of order) {
    if (left <= 0) break;
    out[n]++;
    left--;
  }
  return out;
}

/**
 * Stage 5: sample `target` queries whose category mix matches `proportions` (the categorised original traffic),
 * deterministically by seed. Returns the chosen items in traffic order, and the allocation per category.
 */
export function sampleByProportions<T extends { tag: string; line: number }>(
  items: T[],
  target: number,
  proportions: Record<string, number>,
  seed: string,
): { chosen: T[]; allocation: Record<string, number> } {
  const byTag = new Map<string, T[]>();
  for (const item of items) (byTag.get(item.tag) ?? byTag.set(item.tag, []).get(item.tag)!).push(item);
  const capacity = Object.fromEntries(Object.keys(proportions).map((t) => [t, byTag.get(t)?.length ?? 0]));
  const allocation = allocate(target, proportions, capacity);
  const chosen = Object.keys(allocation).flatMap((tag) =>
    shuffled(byTag.get(tag) ?? [], seededRandom(`${seed}:${tag}`)).slice(0, allocation[tag]),
  );
  chosen.sort((a, b) => a.line - b.line);
  return { chosen, allocation };
}
