import { z } from 'zod';
import type { JsonAnswerSpec } from '../../core/llm';
import { CITATION_VERDICTS, CLAIM_STATUSES } from '../../core/grounding';

/**
 * The answer schemas of the grounding checks (sent as response_format, checked with zod anyway). Their names start with
 * `grounding_`, which is how the simulator recognises a grounding request.
 */

const nullable = (type: string) => ({ type: [type, 'null'] });
const numericFields = { entity: nullable('string'), metric: nullable('string'), value: nullable('number'), unit: nullable('string') };
const numericZod = { entity: z.string().nullable(), metric: z.string().nullable(), value: z.number().finite().nullable(), unit: z.string().nullable() };

const objectSchema = (properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, required: Object.keys(properties), properties });
const claimsSchema = (claim: Record<string, unknown>) => objectSchema({ claims: { type: 'array', items: objectSchema(claim) } });

export interface VerifiedClaimAnswer {
  text: string;
  status: (typeof CLAIM_STATUSES)[number];
  excerpt: string | null;
  entity: string | null;
  metric: string | null;
  value: number | null;
  unit: string | null;
}
export type ExtractedClaimAnswer = Omit<VerifiedClaimAnswer, 'status' | 'excerpt'>;
export interface CitationAnswer {
  claim: number;
  source: string | null;
  verdict: (typeof CITATION_VERDICTS)[number];
}

export const hallucinationSpec: JsonAnswerSpec<{ claims: VerifiedClaimAnswer[] }> = {
  name: 'grounding_hallucination',
  jsonSchema: claimsSchema({ text: { type: 'string' }, status: { type: 'string', enum: [...CLAIM_STATUSES] }, excerpt: nullable('string'), ...numericFields }),
  zodSchema: z.object({ claims: z.array(z.object({ text: z.string().min(1), status: z.enum(CLAIM_STATUSES), excerpt: z.string().nullable(), ...numericZod }).strict()) }).strict(),
};

export const extractionSpec: JsonAnswerSpec<{ claims: ExtractedClaimAnswer[] }> = {
  name: 'grounding_extraction',
  jsonSchema: claimsSchema({ text: { type: 'string' }, ...numericFields }),
  zodSchema: z.object({ claims: z.array(z.object({ text: z.string().min(1), ...numericZod }).strict()) }).strict(),
};

/** One verdict per claim, numbered as the prompt lists them (from 1), each claim exactly once. */
export function citationsSpec(claims: number): JsonAnswerSpec<{ claims: CitationAnswer[] }> {
  return {
    name: 'grounding_citations',
    jsonSchema: claimsSchema({ claim: { type: 'integer' }, source: nullable('string'), verdict: { type: 'string', enum: [...CITATION_VERDICTS] } }),
    zodSchema: z.object({ claims: z.array(z.object({ claim: z.number().int(), source: z.string().nullable(), verdict: z.enum(CITATION_VERDICTS) }).strict()) }).strict(),
    check: (value) => {
      const numbers = value.claims.map((c) => c.claim).sort((a, b) => a - b);
      const expected = Array.from({ length: claims }, (_, i) => i + 1);
      return numbers.join(',') === expected.join(',') ? null : `expected one entry for each claim 1..${claims}, got claims [${numbers.join(', ')}]`;
    },
  };
}
