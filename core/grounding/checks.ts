import { z } from 'zod';
import { judgeObjectSchema } from '../llm/judgeConfig';
import type { AnswerSource } from '../model/types';

/**
 * Grounding checks: whether an answer stays true to the context its copilot had (tool outputs, retrieved documents)
 * and cites its sources correctly. The stored shapes live here; the judging is rubrics/grounding, the report
 * core/grounding/report.ts.
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

/** The hallucination label as the reference's judge chooses it itself (src/prompts/hallucination_check.py). */
export const JUDGE_HALLUCINATION_LABELS = ['factual', 'partially factual', 'hallucinated'] as const;
/** The per-answer citation label as the reference's judge chooses it (src/prompts/citation_check.py). */
export const JUDGE_CITATION_LABELS = ['correct', 'partially correct', 'incorrect'] as const;

/**
 * What the grounding judge stated about the whole answer, kept beside the figures judgeflow computes from the claims:
 * the reference records the judge's own label and verification rate rather than computing them.
 */
export interface GroundingJudgeStated {
  hallucinationLabel: (typeof JUDGE_HALLUCINATION_LABELS)[number] | null;
  /** The judge's stated verification rate, 0–100 as the reference asks it. */
  verificationRatePercent: number | null;
  citationLabel: (typeof JUDGE_CITATION_LABELS)[number] | null;
  /**
   * Claims (by index) the context does not state but whose topic or entity it discusses: the reference counts these
   * verified ("same topic"), judgeflow counts them fabricated.
   */
  sameTopicClaims: number[];
  /** When the judge was shown only part of the context: characters shown of the whole. */
  contextShown: { chars: number; of: number } | null;
}

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
  /** What the judge stated about the answer as a whole (absent in checks stored before it was asked). */
  stated?: GroundingJudgeStated | null;
}

/** The grounding inputs of one response: what the judge is shown besides the query and the answer. */
export interface GroundingEvidence {
  context: string | null;
  sources: AnswerSource[] | null;
}

/** Context kept per response when the config does not say (grounding.maxContextChars). */
export const DEFAULT_MAX_CONTEXT_CHARS = 200_000;

/** The config's `grounding:` block: which checks run on every response, and who judges them. */
export const groundingConfigSchema = z
  .object({
    checks: z
      .array(z.enum(GROUNDING_CHECKS))
      .min(1)
      .default([...GROUNDING_CHECKS])
      .describe(
        'which grounding checks run on every collected response: hallucination (claims against the context) and citations (claims against the sources they cite)',
      ),
    // Grounding work items are judged in the lanes of the run's judges, live or in batches as those judge.
    judge: judgeObjectSchema
      .omit({ samples: true, batch: true, batchPollSeconds: true, batchDeadlineHours: true })
      .optional()
      .describe(
        "the judge of the grounding checks; default: the run's judge (a panel: each member checks every response)",
      ),
    rubric: z
      .string()
      .min(1)
      .optional()
      .describe(
        'a grounding rubric directory other than the shipped rubrics/grounding (prompts, answer schemas, label thresholds)',
      ),
    maxContextChars: z
      .number()
      .int()
      .min(1000)
      .max(5_000_000)
      .default(DEFAULT_MAX_CONTEXT_CHARS)
      .describe(
        'context kept per response in the results store; longer context is cut to this with a warning in the report',
      ),
    judgeContextChars: z
      .union([z.number().int().min(1000), z.literal('whole')])
      .optional()
      .describe(
        "context shown to the grounding judge per response; default the grounding rubric's maxContextChars (60,000). 'whole' shows all of it, as the reference harness does (then raise maxContextChars too); a cut is reported per answer",
      ),
    reuseAnswers: z
      .boolean()
      .default(true)
      .describe(
        'when the run reuses judge answers (an unchanged re-judge), grounding answers are reused too; rejudge --grounding sets false to ask them afresh',
      ),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (new Set(c.checks).size !== c.checks.length)
      ctx.addIssue({ code: 'custom', path: ['checks'], message: 'each check may be named once' });
  });

export type GroundingConfig = z.infer<typeof groundingConfigSchema>;

/** Stored context is cut to the configured size; this marker ends the part kept, so reports and judges can tell. */
export function limitContext(
  context: string | undefined | null,
  maxChars: number,
): { context: string | null; truncated: boolean } {
  if (!context) return { context: null, truncated: false };
  if (context.length <= maxChars) return { context, truncated: false };
  return {
    context: `${context.slice(0, maxChars)}\n${CONTEXT_CUT_MARK} (${context.length - maxChars} of ${context.length} characters dropped; raise grounding.maxContextChars to keep more)]`,
    truncated: true,
  };
}
export const CONTEXT_CUT_MARK = '[context cut by judgeflow';

/** What a grounding judge is shown as a response's context: its own context, else the text of its sources; null when it has neither ("no context"). */
export function evidenceText(context: string | null, sources: AnswerSource[] | null | undefined): string | null {
  if (context?.trim()) return context;
  const texts = (sources ?? [])
    .filter((s) => s.text?.trim())
    .map((s) => `[${s.id ?? s.url ?? ''}] ${s.title ?? ''}\n${s.text}`.trim());
  return texts.length ? texts.join('\n\n') : null;
}
