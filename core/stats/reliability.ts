/**
 * How far repeated samples of one judge agree with each other (judge.samples): report.json's `reliability` block.
 * Per dimension and for the total: the pooled within-unit standard deviation, the share of units whose samples
 * differ by at least 2 points, and Krippendorff's alpha (interval) with samples as raters — 1 when every unit got the
 * same score every time, towards 0 when the spread within a unit is as large as the spread between units.
 */
import { krippendorffAlpha, withinUnitSpread, type Ratings } from './agreement';
import { byJudge, byUnit } from './consensus';
import type { ScoreKeyKind } from '../model/protocol';
import type { StoredJudgment } from '../model/types';

export const DISAGREE_POINTS = 2;
export const RELIABILITY_METHOD =
  "within-unit SD pooled over units with ≥ 2 successful samples; disagreeShare: units whose samples' max − min ≥ 2 points; alpha: Krippendorff's alpha (interval), samples as raters";

export interface SpreadFigures {
  /** Units with at least two successful samples. */
  units: number;
  withinUnitSd: number | null;
  disagreeShare: number | null;
  alpha: number | null;
}

export interface JudgeReliability {
  /** Units (query × copilot) this judge was asked about. */
  units: number;
  samplesRequested: number;
  samplesOk: number;
  samplesFailed: number;
  /** Units that kept some samples but lost others (their score is the mean of the rest). */
  unitsWithFailedSamples: number;
  /** Units where every sample failed (no score). */
  unitsWithoutScore: number;
  dimensions: Record<string, SpreadFigures>;
  total: SpreadFigures;
  /** Protocols that rank (CryptoAnalystBench): how often the rank-1 response of a query differs between its samples. */
  rank1Changes?: { queries: number; changed: number; rate: number | null };
}

export interface Reliability extends JudgeReliability {
  samples: number;
  method: string;
  /** Panels: the same figures for each judge's own samples (the top-level figures pool every judge's units). */
  judges?: Record<string, JudgeReliability>;
}

const finite = (x: number) => (Number.isFinite(x) ? x : null);

function spread(units: Ratings): SpreadFigures {
  const s = withinUnitSpread(units, DISAGREE_POINTS);
  return {
    units: s.units,
    withinUnitSd: finite(s.sd),
    disagreeShare: finite(s.disagreeShare),
    alpha: finite(krippendorffAlpha(units, 'interval')),
  };
}

/** Units of one judge: each a list of samples (null = failed sample). */
function judgeReliability(
  rows: StoredJudgment[],
  samples: number,
  scoreKey: (key: string) => ScoreKeyKind,
): JudgeReliability {
  const units = byUnit(rows);
  const ok = rows.filter((j) => j.status === 'ok');
  const dimensionKeys = [...new Set(ok.flatMap((j) => Object.keys(j.scores ?? {})))]
    .filter((k) => scoreKey(k).kind === 'dimension')
    .sort();
  const valuesOf = (pick: (j: StoredJudgment) => number | null | undefined): Ratings =>
    units
      .map((u) => u.map((j) => (j.status === 'ok' ? (pick(j) ?? null) : null)))
      .filter((u) => u.some((v) => v !== null));
  const failedPer = units.map((u) => u.filter((j) => j.status !== 'ok').length);
  const out: JudgeReliability = {
    units: units.length,
    samplesRequested: units.length * samples,
    samplesOk: ok.length,
    samplesFailed: rows.length - ok.length,
    unitsWithFailedSamples: units.filter((u, i) => failedPer[i] > 0 && failedPer[i] < u.length).length,
    unitsWithoutScore: units.filter((u, i) => failedPer[i] === u.length).length,
    dimensions: Object.fromEntries(dimensionKeys.map((k) => [k, spread(valuesOf((j) => j.scores?.[k]))])),
    total: spread(valuesOf((j) => j.total)),
  };
  if (rows.some((j) => j.rank !== null)) out.rank1Changes = rank1Changes(rows);
  return out;
}

/** Per query, the copilot ranked first in each sample whose ranking succeeded; changed when not all the same. */
function rank1Changes(rows: StoredJudgment[]): NonNullable<JudgeReliability['rank1Changes']> {
  const winners = new Map<string, Map<number, string[]>>();
  for (const j of rows) {
    if (j.rank !== 1) continue;
    const bySample = winners.get(j.queryId) ?? new Map<number, string[]>();
    bySample.set(j.sample ?? 0, [...(bySample.get(j.sample ?? 0) ?? []), j.copilot]);
    winners.set(j.queryId, bySample);
  }
  let queries = 0;
  let changed = 0;
  for (const bySample of winners.values()) {
    const firsts = [...bySample.values()].filter((w) => w.length === 1).map((w) => w[0]);
    if (firsts.length < 2) continue;
    queries++;
    if (new Set(firsts).size > 1) changed++;
  }
  return { queries, changed, rate: queries ? changed / queries : null };
}

/** The `reliability` block, or null when every judge was asked once per unit (nothing to measure). */
export function reliability(
  rows: StoredJudgment[],
  samples: number,
  scoreKey: (key: string) => ScoreKeyKind,
): Reliability | null {
  if (samples < 2) return null;
  const judges = byJudge(rows);
  // Pooled: a panel's units are (judge, query, copilot), so judges never count as samples of one another.
  const pooledRows = [...judges.entries()].flatMap(([name, js]) =>
    js.map((j) => ({ ...j, queryId: `${name}\u0000${j.queryId}` })),
  );
  const pooled = judgeReliability(pooledRows, samples, scoreKey);
  return {
    samples,
    method: RELIABILITY_METHOD,
    ...pooled,
    ...(judges.size > 1
      ? { judges: Object.fromEntries([...judges].map(([name, js]) => [name, judgeReliability(js, samples, scoreKey)])) }
      : {}),
  };
}
