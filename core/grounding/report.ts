/**
 * The `grounding` block of a run's report: per copilot, how many of its claims its own context supports (verification
 * rate, query-clustered interval), its labels and citation figures; the same by query label; numeric claims on which
 * copilots disagree; and every claim for the drill-down. Pure: built from stored responses and checks.
 */
import {
  CONTEXT_CUT_MARK,
  evidenceText,
  type GroundingCheckName,
  type GroundingClaim,
  type StoredGroundingCheck,
} from './checks';
import { clusteredWilsonInterval } from '../stats/stats';
import type { Query, StoredResponse } from '../model/types';

export interface GroundingCopilotFigures {
  /** Collected answers (status ok). */
  responses: number;
  /** Of those, answers that came with context (or sources with text): the only ones checked. */
  responsesWithContext: number;
  /** Answers whose context was cut to grounding.maxContextChars when stored. */
  contextTruncated: number;
  /** Checks that failed (the judge's answer stayed invalid, or every attempt crashed): missing data. */
  checksFailed: number;
  claims: number;
  verified: number;
  derivable: number;
  fabricated: number;
  contradicted: number;
  /** Share of claims verified exactly or derivably, 0–1; null without any checked claim. */
  verificationRate: number | null;
  /** 95% Wilson interval of verificationRate on the design-effect–adjusted count (a query's claims are one cluster; clusteredWilsonInterval). */
  ci95: { low: number; high: number } | null;
  labels: { factual: number; partial: number; hallucinated: number };
  /** Claims that cite a source; of them correctly cited (directly or derivably) and incorrectly. */
  claimsWithCitations: number | null;
  correctlyCited: number | null;
  incorrectlyCited: number | null;
  missingCitations: number | null;
  /** Correct citations / claims with citations (the reference's citation precision). */
  citationPrecision: number | null;
  /** The reference's citation completeness: claims with a citation ÷ (all claims − claims needing none), right or wrong. */
  citationCompleteness: number | null;
  /** judgeflow's stricter completeness: correctly cited claims ÷ claims needing a citation (a wrong citation does not count). */
  correctCitationCompleteness: number | null;
  /** The judge's own per-answer citation label (the reference's correct / partially correct / incorrect), counted over answers. */
  citationLabels: { correct: number; partiallyCorrect: number; incorrect: number };
  /** The judge's own per-answer hallucination label (the reference's), counted over answers; judgeflow's computed ones are `labels`. */
  judgeLabels: { factual: number; partiallyFactual: number; hallucinated: number };
  /** Mean over answers of the judge's stated verification rate (0–1; the reference's verification_rate_percentage / 100). */
  statedVerificationRate: number | null;
  /**
   * The claim-level rate as the reference counts "verified": exact, derivable, or about a topic the context discusses
   * ("same topic"); judgeflow's `verificationRate` counts only the first two.
   */
  referenceVerificationRate: number | null;
  /** Answers the judge saw only part of the context of (grounding.judgeContextChars); each is listed in `answers`. */
  contextCutForJudge: number;
  /** Claims listed but not verified: from answers without context, or when only the citation check ran (compared across copilots, never counted as grounded or not). */
  uncheckedClaims: number;
}

export interface CrossCopilotConflict {
  queryId: string;
  entity: string;
  metric: string;
  unit: string | null;
  /** One entry per copilot that stated the figure (its first such claim), lowest value first. */
  claims: Array<{ copilot: string; value: number; text: string; status: GroundingClaim['status'] }>;
}

export interface GroundingClaimRow {
  queryId: string;
  copilot: string;
  judge: string;
  text: string;
  status: GroundingClaim['status'];
  excerpt: string | null;
  citedSource: string | null;
  citation: string | null;
}

/** One checked answer: judgeflow's label beside what the judge stated, and any cut of its context. */
export interface GroundingAnswerRow {
  queryId: string;
  copilot: string;
  judge: string;
  label: StoredGroundingCheck['label'];
  judgeLabel: string | null;
  verificationRate: number | null;
  statedVerificationRate: number | null;
  citationLabel: string | null;
  citationCompleteness: number | null;
  /** Characters of context the judge was shown, of the whole; null when it saw all of it. */
  contextShown: { chars: number; of: number } | null;
}

export interface GroundingReport {
  groundingVersion: string;
  checks: GroundingCheckName[];
  copilots: Record<string, GroundingCopilotFigures>;
  /** label name → label value → copilot → claims, verified (exact or derivable), verificationRate. */
  byCategory: Record<
    string,
    Record<string, Record<string, { claims: number; verified: number; verificationRate: number | null }>>
  >;
  crossCopilotConflicts: CrossCopilotConflict[];
  /** Every ok check, one row per answer (and judge). */
  answers: GroundingAnswerRow[];
  claims: GroundingClaimRow[];
}

/** Values further apart than this (relative) disagree; closer ones are the same figure rounded differently. */
export const CONFLICT_TOLERANCE = 0.02;
const EXCERPT_CHARS = 600;

const verifiedOf = (c: Pick<GroundingClaim, 'status'>) => c.status === 'exact' || c.status === 'derivable';
const ratio = (a: number, b: number) => (b ? a / b : null);

export function groundingReport(input: {
  groundingVersion: string;
  checks: GroundingCheckName[];
  copilots: string[];
  queries: Query[];
  responses: StoredResponse[];
  stored: StoredGroundingCheck[];
  labelsOf: (q: Query) => Record<string, string[]>;
  seed: string;
}): GroundingReport {
  const { copilots, responses, stored } = input;
  const citations = input.checks.includes('citations');
  const ok = stored.filter((g) => g.status === 'ok');
  const figures = Object.fromEntries(
    copilots.map((copilot): [string, GroundingCopilotFigures] => {
      const answered = responses.filter((r) => r.copilot === copilot && r.status === 'ok');
      const checks = ok.filter((g) => g.copilot === copilot);
      // Verified against context: every claim of a check, unless only the citations were asked for (claims unchecked).
      const all = checks.flatMap((g) => g.claims);
      const claims = all.filter((c) => c.status !== 'unchecked');
      const count = (status: GroundingClaim['status']) => claims.filter((c) => c.status === status).length;
      const verified = count('exact');
      const derivable = count('derivable');
      // Each query's claims resampled together: claims of one answer (and one query) are not independent.
      const perQuery = [...groupBy(checks, (g) => g.queryId).values()]
        .map((gs) => {
          const cs = gs.flatMap((g) => g.claims).filter((c) => c.status !== 'unchecked');
          return { verified: cs.filter(verifiedOf).length, claims: cs.length };
        })
        .filter((q) => q.claims > 0);
      const interval = clusteredWilsonInterval(perQuery.map((q) => ({ k: q.verified, n: q.claims })));
      const ci95 = interval ? { low: interval.low, high: interval.high } : null;
      const cited = all.filter((c) => c.citation);
      const verdicts = (...vs: string[]) => cited.filter((c) => vs.includes(c.citation!.verdict)).length;
      const withCitation = cited.filter((c) => c.citation!.source !== null).length;
      const correct = verdicts('direct', 'derivable');
      const needing = cited.length - verdicts('not_needed');
      const checkedCitations = citations && cited.length > 0;
      const stated = checks.map((g) => g.stated).filter((x): x is NonNullable<typeof x> => !!x);
      const sameTopic = checks.reduce(
        (n, g) => n + (g.stated?.sameTopicClaims ?? []).filter((i) => g.claims[i]?.status === 'fabricated').length,
        0,
      );
      const rates = stated
        .filter((x) => x.verificationRatePercent !== null)
        .map((x) => x.verificationRatePercent! / 100);
      return [
        copilot,
        {
          responses: answered.length,
          responsesWithContext: answered.filter((r) => evidenceText(r.context, r.sources) !== null).length,
          contextTruncated: answered.filter((r) => r.context?.includes(CONTEXT_CUT_MARK)).length,
          checksFailed: stored.filter((g) => g.copilot === copilot && g.status === 'failed').length,
          claims: claims.length,
          verified,
          derivable,
          fabricated: count('fabricated'),
          contradicted: count('contradicted'),
          verificationRate: ratio(verified + derivable, claims.length),
          ci95,
          labels: {
            factual: checks.filter((g) => g.label === 'factual').length,
            partial: checks.filter((g) => g.label === 'partial').length,
            hallucinated: checks.filter((g) => g.label === 'hallucinated').length,
          },
          claimsWithCitations: checkedCitations ? withCitation : null,
          correctlyCited: checkedCitations ? correct : null,
          incorrectlyCited: checkedCitations ? verdicts('incorrect') : null,
          missingCitations: checkedCitations ? verdicts('missing') : null,
          citationPrecision: checkedCitations ? ratio(correct, withCitation) : null,
          citationCompleteness: checkedCitations ? ratio(withCitation, needing) : null,
          correctCitationCompleteness: checkedCitations ? ratio(correct, needing) : null,
          citationLabels: {
            correct: stated.filter((x) => x.citationLabel === 'correct').length,
            partiallyCorrect: stated.filter((x) => x.citationLabel === 'partially correct').length,
            incorrect: stated.filter((x) => x.citationLabel === 'incorrect').length,
          },
          judgeLabels: {
            factual: stated.filter((x) => x.hallucinationLabel === 'factual').length,
            partiallyFactual: stated.filter((x) => x.hallucinationLabel === 'partially factual').length,
            hallucinated: stated.filter((x) => x.hallucinationLabel === 'hallucinated').length,
          },
          statedVerificationRate: rates.length ? rates.reduce((n, r) => n + r, 0) / rates.length : null,
          referenceVerificationRate: ratio(verified + derivable + sameTopic, claims.length),
          contextCutForJudge: stated.filter((x) => x.contextShown).length,
          uncheckedClaims: stored
            .filter((g) => g.copilot === copilot && g.status !== 'failed')
            .reduce((n, g) => n + g.claims.filter((c) => c.status === 'unchecked').length, 0),
        },
      ];
    }),
  );

  const byCategory: GroundingReport['byCategory'] = {};
  const queryById = new Map(input.queries.map((q) => [q.id, q]));
  for (const g of ok) {
    const query = queryById.get(g.queryId);
    if (!query) continue;
    for (const [label, values] of Object.entries(input.labelsOf(query)))
      for (const value of values) {
        const cell = (((byCategory[label] ??= {})[value] ??= {})[g.copilot] ??= {
          claims: 0,
          verified: 0,
          verificationRate: null,
        });
        cell.claims += g.claims.filter((c) => c.status !== 'unchecked').length;
        cell.verified += g.claims.filter(verifiedOf).length;
        cell.verificationRate = ratio(cell.verified, cell.claims);
      }
  }

  return {
    groundingVersion: input.groundingVersion,
    checks: input.checks,
    copilots: figures,
    byCategory,
    crossCopilotConflicts: crossCopilotConflicts(stored.filter((g) => g.status !== 'failed')),
    answers: ok.map((g) => {
      const checked = g.claims.filter((c) => c.status !== 'unchecked');
      const cited = g.claims.filter((c) => c.citation);
      const needing = cited.filter((c) => c.citation!.verdict !== 'not_needed').length;
      return {
        queryId: g.queryId,
        copilot: g.copilot,
        judge: g.judgeName,
        label: g.label,
        judgeLabel: g.stated?.hallucinationLabel ?? null,
        verificationRate: ratio(checked.filter(verifiedOf).length, checked.length),
        statedVerificationRate:
          g.stated?.verificationRatePercent == null ? null : g.stated.verificationRatePercent / 100,
        citationLabel: g.stated?.citationLabel ?? null,
        citationCompleteness: cited.length
          ? ratio(cited.filter((c) => c.citation!.source !== null).length, needing)
          : null,
        contextShown: g.stated?.contextShown ?? null,
      };
    }),
    claims: stored.flatMap((g) =>
      g.claims.map((c) => ({
        queryId: g.queryId,
        copilot: g.copilot,
        judge: g.judgeName,
        text: c.text,
        status: c.status,
        excerpt:
          c.excerpt === null
            ? null
            : c.excerpt.length > EXCERPT_CHARS
              ? `${c.excerpt.slice(0, EXCERPT_CHARS)}…`
              : c.excerpt,
        citedSource: c.citation?.source ?? null,
        citation: c.citation?.verdict ?? null,
      })),
    ),
  };
}

const norm = (s: string) => s.trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * Numeric claims of one query about the same entity and metric (and unit) whose values differ between copilots by more
 * than CONFLICT_TOLERANCE: at least one of them is wrong, whether or not either had context.
 */
export function crossCopilotConflicts(checks: StoredGroundingCheck[]): CrossCopilotConflict[] {
  const groups = new Map<
    string,
    {
      queryId: string;
      entity: string;
      metric: string;
      unit: string | null;
      byCopilot: Map<string, CrossCopilotConflict['claims'][number]>;
    }
  >();
  for (const g of checks)
    for (const c of g.claims) {
      if (c.entity === null || c.metric === null || c.value === null || !Number.isFinite(c.value)) continue;
      const key = [g.queryId, norm(c.entity), norm(c.metric), norm(c.unit ?? '')].join('\u0000');
      const group = groups.get(key) ?? {
        queryId: g.queryId,
        entity: c.entity,
        metric: c.metric,
        unit: c.unit,
        byCopilot: new Map(),
      };
      groups.set(key, group);
      if (!group.byCopilot.has(g.copilot))
        group.byCopilot.set(g.copilot, { copilot: g.copilot, value: c.value, text: c.text, status: c.status });
    }
  const conflicts: CrossCopilotConflict[] = [];
  for (const { byCopilot, ...where } of groups.values()) {
    const claims = [...byCopilot.values()].sort((a, b) => a.value - b.value || a.copilot.localeCompare(b.copilot));
    if (claims.length < 2) continue;
    const low = claims[0].value;
    const high = claims[claims.length - 1].value;
    if (Math.abs(high - low) > CONFLICT_TOLERANCE * Math.max(Math.abs(high), Math.abs(low)))
      conflicts.push({ ...where, claims });
  }
  return conflicts.sort(
    (a, b) =>
      a.queryId.localeCompare(b.queryId) || a.entity.localeCompare(b.entity) || a.metric.localeCompare(b.metric),
  );
}

function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) out.set(key(x), [...(out.get(key(x)) ?? []), x]);
  return out;
}
