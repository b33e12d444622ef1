import { z } from 'zod';
import type { JsonAnswerSpec } from '../../core/llm/client';
import {
  CITATION_VERDICTS,
  CLAIM_STATUSES,
  JUDGE_CITATION_LABELS,
  JUDGE_HALLUCINATION_LABELS,
} from '../../core/grounding/checks';

/**
 * The answer schemas of the grounding checks (sent as response_format, checked with zod anyway). Their names start with
 * `grounding_`, which is how the simulator recognises a grounding request.
 */

const nullable = (type: string) => ({ type: [type, 'null'] });
const numericFields = {
  entity: nullable('string'),
  metric: nullable('string'),
  value: nullable('number'),
  unit: nullable('string'),
};
const numericZod = {
  entity: z.string().nullable(),
  metric: z.string().nullable(),
  value: z.number().finite().nullable(),
  unit: z.string().nullable(),
};

const objectSchema = (properties: Record<string, unknown>) => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});
const claimsSchema = (claim: Record<string, unknown>) =>
  objectSchema({ claims: { type: 'array', items: objectSchema(claim) } });

export interface VerifiedClaimAnswer {
  text: string;
  status: (typeof CLAIM_STATUSES)[number];
  /** The context discusses this claim's topic or entity (whether or not it states the claim). */
  sameTopic: boolean;
  excerpt: string | null;
  entity: string | null;
  metric: string | null;
  value: number | null;
  unit: string | null;
}
export type ExtractedClaimAnswer = Omit<VerifiedClaimAnswer, 'status' | 'excerpt' | 'sameTopic'>;
/** The answer as a whole, as the reference's judge labels it. */
export interface HallucinationAnswer {
  claims: VerifiedClaimAnswer[];
  label: (typeof JUDGE_HALLUCINATION_LABELS)[number];
  verificationRate: number;
}
export interface CitationAnswer {
  claim: number;
  source: string | null;
  verdict: (typeof CITATION_VERDICTS)[number];
}

const hallucinationClaim = {
  text: { type: 'string' },
  status: { type: 'string', enum: [...CLAIM_STATUSES] },
  sameTopic: { type: 'boolean' },
  excerpt: nullable('string'),
  ...numericFields,
};
export const hallucinationSpec: JsonAnswerSpec<HallucinationAnswer> = {
  name: 'grounding_hallucination',
  jsonSchema: objectSchema({
    claims: { type: 'array', items: objectSchema(hallucinationClaim) },
    label: { type: 'string', enum: [...JUDGE_HALLUCINATION_LABELS] },
    verificationRate: { type: 'integer', minimum: 0, maximum: 100 },
  }),
  zodSchema: z
    .object({
      claims: z.array(
        z
          .object({
            text: z.string().min(1),
            status: z.enum(CLAIM_STATUSES),
            sameTopic: z.boolean(),
            excerpt: z.string().nullable(),
            ...numericZod,
          })
          .strict(),
      ),
      label: z.enum(JUDGE_HALLUCINATION_LABELS),
      verificationRate: z.number().int().min(0).max(100),
    })
    .strict(),
};

export const extractionSpec: JsonAnswerSpec<{ claims: ExtractedClaimAnswer[] }> = {
  name: 'grounding_extraction',
  jsonSchema: claimsSchema({ text: { type: 'string' }, ...numericFields }),
  zodSchema: z.object({ claims: z.array(z.object({ text: z.string().min(1), ...numericZod }).strict()) }).strict(),
};

/** One verdict per claim, numbered as the prompt lists them (from 1), each claim exactly once, and the answer's label. */
export function citationsSpec(
  claims: number,
): JsonAnswerSpec<{ claims: CitationAnswer[]; label: (typeof JUDGE_CITATION_LABELS)[number] }> {
  return {
    name: 'grounding_citations',
    jsonSchema: objectSchema({
      claims: {
        type: 'array',
        items: objectSchema({
          claim: { type: 'integer' },
          source: nullable('string'),
          verdict: { type: 'string', enum: [...CITATION_VERDICTS] },
        }),
      },
      label: { type: 'string', enum: [...JUDGE_CITATION_LABELS] },
    }),
    zodSchema: z
      .object({
        claims: z.array(
          z
            .object({ claim: z.number().int(), source: z.string().nullable(), verdict: z.enum(CITATION_VERDICTS) })
            .strict(),
        ),
        label: z.enum(JUDGE_CITATION_LABELS),
      })
      .strict(),
    check: (value) => {
      const numbers = value.claims.map((c) => c.claim).sort((a, b) => a - b);
      const expected = Array.from({ length: claims }, (_, i) => i + 1);
      return numbers.join(',') === expected.join(',')
        ? null
        : `expected one entry for each claim 1..${claims}, got claims [${numbers.join(', ')}]`;
    },
  };
}
