/**
 * Comparing two runs judged on the same queries: a re-judge and its source, or two runs of one snapshot
 * (an agent before and after a change). Pure: fed from the results store by client/compareRuns.ts.
 *
 * Protocol-generic: it works on what every protocol stores per judgment — the response's `total`, its
 * per-dimension `scores` and (for protocols that rank) its `rank` — and groups queries by the labels the
 * run's protocol reads from them (`labelsOf`: LATTICE task and category, CryptoAnalystBench tags). Differences are paired by query: only queries
 * a copilot has an ok judgment for in BOTH runs count, and the sign-flip permutation test of core/stats/stats.ts
 * says whether a mean difference is larger than chance.
 *
 * Query ids are positional in most snapshots (generated `t1-c1-01`, CAB CSV `q001`), so across two different
 * snapshots an id alone does not name the same query: there a query is paired only when both snapshots hold
 * its id with the same normalised text. Score keys the protocol calls flags (`scoreKey`, e.g. CryptoAnalystBench's
 * error taxonomy) are not dimensions; their rates are compared on their own.
 */
import type { ProtocolModule } from '../model/protocol';
import { BCA_MIN_N, holmAdjust, mean, pairedTest } from '../stats/stats';
import type { RunRecord } from '../model/store';
import { normalizeText } from '../snapshots/text';
import type { Query, StoredJudgment } from '../model/types';
import type { StoredGroundingCheck } from '../grounding/checks';
import { groundingDeltas, type GroundingComparison } from './grounding';
import type { PairedDelta } from './types';
// Re-exported: a comparison's readers take its deltas from here.
export type { PairedDelta } from './types';

export interface CompareRun extends Pick<
  RunRecord,
  'runId' | 'protocol' | 'snapshotId' | 'rubricVersion' | 'judge' | 'copilots'
> {
  /** Judgments of this run under its own rubric version. */
  judgments: StoredJudgment[];
  /** Its grounding checks (under its own grounding version), when the run had them. */
  grounding?: StoredGroundingCheck[];
}

export interface CompareOptions {
  /** How many of the most-moved (query, copilot) pairs to list. */
  top?: number;
  alpha?: number;
  iterations?: number;
}

export interface GroupDelta {
  n: number;
  a: number | null;
  b: number | null;
  delta: number | null;
}

export interface CopilotComparison {
  /** Mean per-response score (the protocol's headline, responseScoreOf) over all ok judgments of each run (the run's own headline, not only paired queries). */
  scoreA: number | null;
  scoreB: number | null;
  rankA: number | null;
  rankB: number | null;
  /** rankA − rankB: positive means the copilot moved up in B. */
  rankChange: number | null;
  overall: PairedDelta;
  /** Per paired query, B's total − A's, in query-id order: what `gate --max-drop` tests (core/compare/gate.ts). */
  differences: number[];
  /** Rubric dimensions only (error-taxonomy flags are in `taxonomy`). */
  dimensions: Record<string, PairedDelta>;
  /** CryptoAnalystBench error-taxonomy flag → rate (0–1) over the paired responses checked in both runs; empty when not judged. */
  taxonomy: Record<string, GroupDelta>;
  /** Query label → label value → delta of totals (e.g. task.T3, category.C2, tags.defi). */
  groups: Record<string, Record<string, GroupDelta>>;
  /** Mean rank within the query (lower is better), when the protocol ranks responses. */
  meanRank: GroupDelta | null;
  /** Ok judgments without a partner: judged in one run only (a failed or missing judgment in the other, or an unpaired query). */
  okOnlyInA: number;
  okOnlyInB: number;
}

export interface Mover {
  queryId: string;
  copilot: string;
  query: string;
  labels: Record<string, string>;
  delta: number;
  a: { total: number; scores: Record<string, number>; rationales: Record<string, string> | null; rank: number | null };
  b: { total: number; scores: Record<string, number>; rationales: Record<string, string> | null; rank: number | null };
}

/** Which queries the two runs share. */
export interface QueryPairing {
  /** `id` within one snapshot; `id+text` across two (same id AND same normalised text). */
  by: 'id' | 'id+text';
  /** Queries judged in both runs that are paired. */
  paired: number;
  /** Queries judged in A (resp. B) that have no partner in the other run. */
  unpairedA: number;
  unpairedB: number;
  /** Of those: ids judged in both runs whose texts differ (different queries that share a positional id). */
  textMismatch: number;
}

export interface Comparison {
  runA: Omit<CompareRun, 'judgments'>;
  runB: Omit<CompareRun, 'judgments'>;
  sameSnapshot: boolean;
  pairing: QueryPairing;
  rubricChanged: boolean;
  judgeChanged: boolean;
  alpha: number;
  test: string;
  copilots: Record<string, CopilotComparison>;
  onlyInA: string[];
  onlyInB: string[];
  movers: Mover[];
  /** Grounding deltas per copilot, when both runs had grounding checks. */
  grounding?: Record<string, GroundingComparison>;
}

/** What comparing needs to know of the runs' protocol: how it reads a query's labels and its score keys. */
export type ProtocolReading = Pick<ProtocolModule, 'labelsOf' | 'scoreKey' | 'responseScore'>;

/** A response's headline score as its protocol reads it (CryptoAnalystBench: the mean of its four dimensions), else its stored total. */
export const responseScoreOf =
  (protocol: Pick<ProtocolModule, 'responseScore'>) =>
  (j: StoredJudgment): number | null =>
    protocol.responseScore ? protocol.responseScore(j) : j.total;

const meanOrNull = (xs: number[]) => (xs.length ? mean(xs) : null);
const key = (queryId: string, copilot: string) => `${queryId}\u0000${copilot}`;
/** Ok judgments keyed by query and copilot, their `total` read as the protocol's headline score. */
const okOnly = (js: StoredJudgment[], score: (j: StoredJudgment) => number | null) =>
  new Map(
    js
      .map((j) => ({ ...j, total: j.status === 'ok' ? score(j) : null }))
      .filter((j) => j.status === 'ok' && j.total !== null)
      .map((j) => [key(j.queryId, j.copilot), j]),
  );

function paired(a: number[], b: number[], seed: string, opts: Required<CompareOptions>): PairedDelta {
  if (a.length === 0)
    return { n: 0, a: null, b: null, delta: null, ci95: null, pValue: null, pAdjusted: null, significant: false };
  const t = pairedTest(a, b, { seed, alpha: opts.alpha, iterations: opts.iterations });
  // Significance is decided once all copilots are tested (holmAcrossCopilots).
  return {
    n: t.n,
    a: mean(a),
    b: mean(b),
    delta: t.meanDiff,
    ci95: t.ci95,
    pValue: t.pValue,
    pAdjusted: null,
    significant: false,
  };
}

/** Holm over one family of deltas (one per copilot): sets pAdjusted and significant in place. */
function holmAcrossCopilots(family: PairedDelta[], alpha: number): void {
  const adjusted = holmAdjust(family.map((d) => d.pValue ?? NaN));
  family.forEach((d, i) => {
    d.pAdjusted = Number.isNaN(adjusted[i]) ? null : adjusted[i];
    d.significant = d.pAdjusted !== null && d.pAdjusted < alpha;
  });
}

/** Rank 1 = highest mean total; ties share the better rank. */
function ranks(scores: Record<string, number | null>): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [c, s] of Object.entries(scores))
    out[c] = s === null ? null : 1 + Object.values(scores).filter((o) => o !== null && o > s).length;
  return out;
}

/**
 * Which query ids pair: every id judged in both runs of one snapshot; across two snapshots only ids whose
 * texts (each from its own run's snapshot) are equal once normalised.
 */
function pairQueries(
  runA: CompareRun,
  runB: CompareRun,
  queriesA: Map<string, Query>,
  queriesB: Map<string, Query>,
): { ids: Set<string>; pairing: QueryPairing } {
  const sameSnapshot = runA.snapshotId === runB.snapshotId;
  const idsA = new Set(runA.judgments.map((j) => j.queryId));
  const idsB = new Set(runB.judgments.map((j) => j.queryId));
  const ids = new Set<string>();
  let textMismatch = 0;
  for (const id of idsA) {
    if (!idsB.has(id)) continue;
    if (sameSnapshot) {
      ids.add(id);
      continue;
    }
    const qa = queriesA.get(id);
    const qb = queriesB.get(id);
    if (qa && qb && normalizeText(qa.text) === normalizeText(qb.text)) ids.add(id);
    else textMismatch++;
  }
  return {
    ids,
    pairing: {
      by: sameSnapshot ? 'id' : 'id+text',
      paired: ids.size,
      unpairedA: idsA.size - ids.size,
      unpairedB: idsB.size - ids.size,
      textMismatch,
    },
  };
}

/**
 * `queries`: one list when both runs judged one snapshot, else each run's own snapshot queries (`{ a, b }`),
 * so that a query is paired only when its id AND its text match. B's labels and text are shown for a paired query.
 */
export function compareRuns(
  runA: CompareRun,
  runB: CompareRun,
  queries: Query[] | { a: Query[]; b: Query[] },
  protocol: ProtocolReading,
  options: CompareOptions = {},
): Comparison {
  const opts: Required<CompareOptions> = {
    top: options.top ?? 10,
    alpha: options.alpha ?? 0.05,
    iterations: options.iterations ?? 5000,
  };
  const okA = okOnly(runA.judgments, responseScoreOf(protocol));
  const okB = okOnly(runB.judgments, responseScoreOf(protocol));
  const queriesA = new Map((Array.isArray(queries) ? queries : queries.a).map((q) => [q.id, q]));
  const queriesB = new Map((Array.isArray(queries) ? queries : queries.b).map((q) => [q.id, q]));
  const byId = (id: string) => queriesB.get(id) ?? queriesA.get(id);
  // A query a copilot has no partner for is not looked at; every label is read once, through the protocol.
  const labelCache = new Map<string, Record<string, string[]>>();
  const labelsOf = (query: Query | undefined): Record<string, string[]> => {
    if (!query) return {};
    let labels = labelCache.get(query.id);
    if (!labels) labelCache.set(query.id, (labels = protocol.labelsOf(query)));
    return labels;
  };
  const { ids: pairedIds, pairing } = pairQueries(runA, runB, queriesA, queriesB);
  const common = runA.copilots.filter((c) => runB.copilots.includes(c));
  const scoreOf = (ok: Map<string, StoredJudgment>, copilots: string[]) =>
    Object.fromEntries(
      copilots.map((c) => [c, meanOrNull([...ok.values()].filter((j) => j.copilot === c).map((j) => j.total!))]),
    );
  const ranksA = ranks(scoreOf(okA, common));
  const ranksB = ranks(scoreOf(okB, common));
  const scoresA = scoreOf(okA, common);
  const scoresB = scoreOf(okB, common);

  const copilots: Record<string, CopilotComparison> = {};
  const movers: Mover[] = [];
  for (const copilot of common) {
    const pairs = [...okA.values()]
      .filter((j) => j.copilot === copilot && pairedIds.has(j.queryId) && okB.has(key(j.queryId, copilot)))
      .map((ja) => ({ ja, jb: okB.get(key(ja.queryId, copilot))!, query: byId(ja.queryId) }))
      .sort((x, y) => (x.ja.queryId < y.ja.queryId ? -1 : x.ja.queryId > y.ja.queryId ? 1 : 0));
    const overall = paired(
      pairs.map((p) => p.ja.total!),
      pairs.map((p) => p.jb.total!),
      `compare:${copilot}`,
      opts,
    );

    const scoreKeys = [...new Set(pairs.flatMap((p) => Object.keys(p.ja.scores ?? {})))].sort();
    const bothHave = (d: string) =>
      pairs.filter((p) => typeof p.ja.scores?.[d] === 'number' && typeof p.jb.scores?.[d] === 'number');
    const dimensions: Record<string, PairedDelta> = {};
    const taxonomy: Record<string, GroupDelta> = {};
    for (const d of scoreKeys) {
      const withDim = bothHave(d);
      const kind = protocol.scoreKey(d);
      if (kind.kind === 'flag') {
        const a = meanOrNull(withDim.map((p) => p.ja.scores![d]));
        const b = meanOrNull(withDim.map((p) => p.jb.scores![d]));
        taxonomy[kind.name] = { n: withDim.length, a, b, delta: a !== null && b !== null ? b - a : null };
      } else
        dimensions[d] = paired(
          withDim.map((p) => p.ja.scores![d]),
          withDim.map((p) => p.jb.scores![d]),
          `compare:${copilot}:${d}`,
          opts,
        );
    }

    const groups: Record<string, Record<string, GroupDelta>> = {};
    const labelNames = [...new Set(pairs.flatMap((p) => Object.keys(labelsOf(p.query))))];
    for (const label of labelNames) {
      const values = [...new Set(pairs.flatMap((p) => labelsOf(p.query)[label] ?? []))].sort();
      if (!values.length) continue;
      groups[label] = {};
      for (const v of values) {
        const inGroup = pairs.filter((p) => (labelsOf(p.query)[label] ?? []).includes(v));
        const a = meanOrNull(inGroup.map((p) => p.ja.total!));
        const b = meanOrNull(inGroup.map((p) => p.jb.total!));
        groups[label][v] = {
          n: inGroup.length,
          a,
          b,
          delta: meanOrNull(inGroup.map((p) => p.jb.total! - p.ja.total!)),
        };
      }
    }

    const ranked = pairs.filter((p) => p.ja.rank !== null && p.jb.rank !== null);
    const meanRank = ranked.length
      ? {
          n: ranked.length,
          a: mean(ranked.map((p) => p.ja.rank!)),
          b: mean(ranked.map((p) => p.jb.rank!)),
          delta: mean(ranked.map((p) => p.jb.rank! - p.ja.rank!)),
        }
      : null;

    const count = (ok: Map<string, StoredJudgment>, other: Map<string, StoredJudgment>) =>
      [...ok.values()].filter(
        (j) => j.copilot === copilot && !(pairedIds.has(j.queryId) && other.has(key(j.queryId, copilot))),
      ).length;
    copilots[copilot] = {
      scoreA: scoresA[copilot],
      scoreB: scoresB[copilot],
      rankA: ranksA[copilot],
      rankB: ranksB[copilot],
      rankChange: ranksA[copilot] !== null && ranksB[copilot] !== null ? ranksA[copilot]! - ranksB[copilot]! : null,
      overall,
      differences: pairs.map((p) => p.jb.total! - p.ja.total!),
      dimensions,
      taxonomy,
      groups,
      meanRank,
      okOnlyInA: count(okA, okB),
      okOnlyInB: count(okB, okA),
    };

    for (const { ja, jb, query } of pairs) {
      const delta = jb.total! - ja.total!;
      if (delta === 0) continue;
      const labels = Object.fromEntries(
        Object.entries(labelsOf(query)).map(([label, values]) => [label, values.join(', ')]),
      );
      const side = (j: StoredJudgment) => ({
        total: j.total!,
        scores: j.scores ?? {},
        rationales: j.rationales,
        rank: j.rank,
      });
      movers.push({ queryId: ja.queryId, copilot, query: query?.text ?? '', labels, delta, a: side(ja), b: side(jb) });
    }
  }
  const compared = Object.values(copilots);
  holmAcrossCopilots(
    compared.map((c) => c.overall),
    opts.alpha,
  );
  for (const d of new Set(compared.flatMap((c) => Object.keys(c.dimensions))))
    holmAcrossCopilots(
      compared.flatMap((c) => (c.dimensions[d] ? [c.dimensions[d]] : [])),
      opts.alpha,
    );
  movers.sort(
    (x, y) =>
      Math.abs(y.delta) - Math.abs(x.delta) ||
      (x.queryId < y.queryId ? -1 : x.queryId > y.queryId ? 1 : 0) ||
      (x.copilot < y.copilot ? -1 : 1),
  );

  const grounding =
    runA.grounding && runB.grounding
      ? groundingDeltas(runA.grounding, runB.grounding, common, pairedIds, (a, b, seed) => paired(a, b, seed, opts))
      : undefined;
  if (grounding)
    holmAcrossCopilots(
      Object.values(grounding).map((g) => g.verificationRate),
      opts.alpha,
    );
  const strip = ({ judgments: _judgments, grounding: _grounding, ...rest }: CompareRun) => rest;
  return {
    runA: strip(runA),
    runB: strip(runB),
    sameSnapshot: runA.snapshotId === runB.snapshotId,
    pairing,
    rubricChanged: runA.rubricVersion !== runB.rubricVersion,
    judgeChanged:
      runA.judge.model !== runB.judge.model ||
      runA.judge.baseURL !== runB.judge.baseURL ||
      runA.judge.temperature !== runB.judge.temperature,
    alpha: opts.alpha,
    test: `two-sided sign-flip permutation test over paired queries (exact when 2^n ≤ iterations), Holm-corrected across copilots (overall, and per dimension); 95% CI of the mean paired difference (Student t below ${BCA_MIN_N} queries, BCa bootstrap from ${BCA_MIN_N})`,
    copilots,
    onlyInA: runA.copilots.filter((c) => !runB.copilots.includes(c)),
    onlyInB: runB.copilots.filter((c) => !runA.copilots.includes(c)),
    movers: movers.slice(0, opts.top),
    ...(grounding ? { grounding } : {}),
  };
}
