import type { AnswerSource } from './types';

/**
 * Grounding checks: whether an answer stays true to the context its copilot had (tool outputs, retrieved documents)
 * and cites its sources correctly. The stored shapes live here; the judging is rubrics/grounding, the report
 * core/groundingReport.ts.
 */

/** The checks a run may ask for (config `grounding.checks`). */
export const GROUNDING_CHECKS = ['hallucination', 'citations'] as const;
export type GroundingCheckName = (typeof GROUNDING_CHECKS)[number];

/**
 * What the context says about one claim: stated exactly, derivable from it (rounding, unit conversion, arithmetic),
 * absent from it (fabricated), or stated otherwise (contradicted). `unchecked`: the copilot returned no context, so the
 * claim is only listed (for the cross-copilot comparison), never counted as grounded or hallucinated.
 */
export const CLAIM_STATUSES = ['exact', 'derivable', 'fabricated', 'contradicted'] as const;
export type ClaimStatus = (typeof CLAIM_STATUSES)[number] | 'unchecked';

/** How a claim's citation fares against the source it names (citation check). */
export const CITATION_VERDICTS = ['direct', 'derivable', 'incorrect', 'missing', 'not_needed'] as const;
export type CitationVerdict = (typeof CITATION_VERDICTS)[number];

export interface GroundingClaim {
  /** Position in the answer's claim list, from 0. */
  index: number;
  text: string;
  status: ClaimStatus;
  /** The context passage that supports (or contradicts) the claim; null when there is none. */
  excerpt: string | null;
  /** For numeric claims: what it is about, so claims of different copilots on one query can be compared. */
  entity: string | null;
  metric: string | null;
  value: number | null;
  unit: string | null;
  /** The citation check's finding, when that check ran: which source the claim cites and whether it supports it. */
  citation: { source: string | null; verdict: CitationVerdict } | null;
}

export type GroundingLabel = 'factual' | 'partial' | 'hallucinated';

/** One response's grounding check under one grounding rubric version (and panel judge), with every claim. */
export interface StoredGroundingCheck {
  runId: string;
  queryId: string;
  copilot: string;
  groundingVersion: string;
  /** The panel member that checked ('' for a run's single judge or the grounding judge). */
  judgeName: string;
  /** no_context: the response came with no context, its claims are listed unchecked. */
  status: 'ok' | 'failed' | 'no_context';
  label: GroundingLabel | null;
  claims: GroundingClaim[];
  error: string | null;
  judge: { model: string; baseURL: string };
  attempts: number;
  createdAt: string;
}

/** The grounding inputs of one response: what the judge is shown besides the query and the answer. */
export interface GroundingEvidence {
  context: string | null;
  sources: AnswerSource[] | null;
}
