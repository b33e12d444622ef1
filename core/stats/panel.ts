/**
 * A judge panel's own figures (report.json's `panel` block): each judge's leaderboard, how far the judges agree
 * (per dimension and total: Krippendorff's alpha, interval, judges as raters; ICC(2,1) where every judge scored every
 * unit), Kendall's tau-b between every two judges' copilot orderings, the units they disagree on most (with each
 * judge's rationales), and self-preference: for a judge and a copilot of one model family, the judge's own-family term in a
 * two-way model of the panel's per-query totals (core/stats/selfPreference.ts).
 */
import { intraclassCorrelation, kendallTauB, krippendorffAlpha } from './agreement';
import { byJudge, byUnit, consensusJudgments, type PanelAggregate } from './consensus';
import type { ScoreKeyKind } from '../model/protocol';
import { selfPreference as selfPreferenceOf, type SelfPreferenceEntry } from './selfPreference';
import { minJudgesOf } from '../llm/judgeConfig';
import { mean } from './stats';
import type { StoredJudgment } from '../model/types';

export interface PanelMember {
  name: string;
  model: string;
  family?: string;
}

export interface Panel {
  aggregate: PanelAggregate;
  judges: PanelMember[];
  /** judge → copilot → mean total over the units that judge scored (its own leaderboard). */
  leaderboards: Record<string, Record<string, { score: number | null; n: number }>>;
  agreement: Record<string, { units: number; alpha: number | null; icc: number | null }>;
  rankCorrelation: Array<{ a: string; b: string; kendallTau: number | null }>;
  disagreements: Array<{
    queryId: string;
    copilot: string;
    range: number;
    judges: Record<string, { total: number; rationales: Record<string, string> | null }>;
  }>;
  /** Judge × copilot pairs of one model family, with the judge's own-family term (core/stats/selfPreference.ts). */
  selfPreference: SelfPreferenceEntry[];
  /** Judges that must give a verdict on a unit for it to have a panel score (panel.minJudges, default a majority). */
  minJudges?: number;
  /** Units (query × copilot) with fewer judges' verdicts than minJudges: missing data in every score above. */
  unitsBelowMinJudges?: number;
  /** Per judge: of the run's units, how many it gave no verdict on (every sample failed, or none recorded), and the first reason. */
  failures?: Record<string, { failed: number; units: number; firstError: string | null }>;
  method: string;
}

export const PANEL_METHOD =
  "agreement: Krippendorff's alpha (interval) and ICC(2,1) with judges as raters over units (query × copilot), each judge's value the mean of its samples; rankCorrelation: Kendall's tau-b of the copilots' mean totals; disagreements: units with the largest range of judges' totals";

const finite = (x: number) => (Number.isFinite(x) ? x : null);
const unitKey = (j: Pick<StoredJudgment, 'queryId' | 'copilot'>) => `${j.queryId}\u0000${j.copilot}`;

function leaderboard(
  verdicts: StoredJudgment[],
  copilots: string[],
): Record<string, { score: number | null; n: number }> {
  return Object.fromEntries(
    copilots.map((c) => {
      const totals = verdicts
        .filter((j) => j.copilot === c && j.status === 'ok' && j.total !== null)
        .map((j) => j.total!);
      return [c, { score: totals.length ? mean(totals) : null, n: totals.length }];
    }),
  );
}

/** The `panel` block, or null for a run with one judge. */
export function panelFigures(args: {
  rows: StoredJudgment[];
  judges: PanelMember[];
  copilotFamilies: Record<string, string | undefined>;
  aggregate: PanelAggregate;
  minJudges?: number;
  scoreKey: (key: string) => ScoreKeyKind;
  top?: number;
}): Panel | null {
  const { judges, aggregate } = args;
  if (judges.length < 2) return null;
  const copilots = Object.keys(args.copilotFamilies);
  const grouped = byJudge(args.rows);
  // Each judge's verdict per unit: the mean of its samples.
  const perJudge = new Map(judges.map((j) => [j.name, consensusJudgments(grouped.get(j.name) ?? [])]));
  const lookup = new Map(
    judges.map((j) => [
      j.name,
      new Map(
        perJudge
          .get(j.name)!
          .filter((v) => v.status === 'ok')
          .map((v) => [unitKey(v), v]),
      ),
    ]),
  );
  const units = byUnit(args.rows).map((g) => g[0]);
  const valueTable = (pick: (j: StoredJudgment) => number | null | undefined) =>
    units.map((u) => judges.map((j) => pick(lookup.get(j.name)!.get(unitKey(u)) ?? ({} as StoredJudgment)) ?? null));
  const dimensionKeys = [...new Set(args.rows.flatMap((j) => Object.keys(j.scores ?? {})))]
    .filter((k) => args.scoreKey(k).kind === 'dimension')
    .sort();
  const agreementOf = (table: Array<Array<number | null>>) => {
    const rated = table.filter((r) => r.filter((v) => v !== null).length >= 2);
    return {
      units: rated.length,
      alpha: finite(krippendorffAlpha(rated, 'interval')),
      icc: finite(intraclassCorrelation(table.filter((r) => r.every((v) => v !== null))).icc2),
    };
  };
  const agreement = Object.fromEntries([
    ...dimensionKeys.map((k) => [k, agreementOf(valueTable((j) => j.scores?.[k]))]),
    ['total', agreementOf(valueTable((j) => j.total))],
  ]);

  const leaderboards = Object.fromEntries(judges.map((j) => [j.name, leaderboard(perJudge.get(j.name)!, copilots)]));
  const rankCorrelation: Panel['rankCorrelation'] = [];
  for (let a = 0; a < judges.length; a++)
    for (let b = a + 1; b < judges.length; b++) {
      const both = copilots.filter(
        (c) => leaderboards[judges[a].name][c].score !== null && leaderboards[judges[b].name][c].score !== null,
      );
      const tau = kendallTauB(
        both.map((c) => leaderboards[judges[a].name][c].score!),
        both.map((c) => leaderboards[judges[b].name][c].score!),
      );
      rankCorrelation.push({ a: judges[a].name, b: judges[b].name, kendallTau: finite(tau) });
    }

  const disagreements = units
    .map((u) => {
      const verdicts = judges
        .map((j) => [j.name, lookup.get(j.name)!.get(unitKey(u))] as const)
        .filter(([, v]) => v?.total !== null && v?.total !== undefined);
      const totals = verdicts.map(([, v]) => v!.total!);
      return {
        queryId: u.queryId,
        copilot: u.copilot,
        range: totals.length >= 2 ? Math.max(...totals) - Math.min(...totals) : 0,
        judges: Object.fromEntries(verdicts.map(([n, v]) => [n, { total: v!.total!, rationales: v!.rationales }])),
      };
    })
    .filter((d) => d.range > 0)
    .sort((x, y) => y.range - x.range || x.queryId.localeCompare(y.queryId) || x.copilot.localeCompare(y.copilot))
    .slice(0, args.top ?? 10);

  const selfPreference = selfPreferenceOf({
    judges,
    copilotFamilies: args.copilotFamilies,
    totals: judges.flatMap((j) =>
      [...lookup.get(j.name)!.values()]
        .filter((v) => v.total !== null)
        .map((v) => ({ judge: j.name, queryId: v.queryId, copilot: v.copilot, total: v.total! })),
    ),
  });

  const failures = Object.fromEntries(
    judges.map((j) => {
      const failedRows = perJudge.get(j.name)!.filter((v) => v.status !== 'ok');
      return [
        j.name,
        {
          failed: units.length - lookup.get(j.name)!.size,
          units: units.length,
          firstError: failedRows[0]?.error ?? (units.length > lookup.get(j.name)!.size ? 'no verdict recorded' : null),
        },
      ];
    }),
  );
  const minJudges = args.minJudges ?? minJudgesOf(undefined, judges.length);
  const unitsBelowMinJudges = units.filter(
    (u) => judges.filter((j) => lookup.get(j.name)!.has(unitKey(u))).length < minJudges,
  ).length;
  return {
    aggregate,
    judges,
    leaderboards,
    agreement,
    rankCorrelation,
    disagreements,
    selfPreference,
    minJudges,
    unitsBelowMinJudges,
    failures,
    method: PANEL_METHOD,
  };
}
