import { z } from 'zod';

/** JSON schema + zod schema for `{ <dim>: { score: int, rationale: string } }`, the shape every judge answers in. */
export function dimensionScoresSpec(dimensionIds: string[], min: number, max: number, rationaleKey = 'rationale') {
  const entry = {
    type: 'object',
    properties: { score: { type: 'integer', minimum: min, maximum: max }, [rationaleKey]: { type: 'string' } },
    required: ['score', rationaleKey],
    additionalProperties: false,
  };
  const jsonSchema = {
    type: 'object',
    properties: Object.fromEntries(dimensionIds.map((d) => [d, entry])),
    required: dimensionIds,
    additionalProperties: false,
  };
  const zodEntry = z.object({ score: z.number().int().min(min).max(max), [rationaleKey]: z.string() });
  const zodSchema = z.object(Object.fromEntries(dimensionIds.map((d) => [d, zodEntry]))) as unknown as z.ZodType<
    Record<string, { score: number } & Record<string, unknown>>
  >;
  return { jsonSchema, zodSchema };
}

export function splitScores(
  answer: Record<string, { score: number } & Record<string, unknown>>,
  rationaleKey = 'rationale',
) {
  const scores: Record<string, number> = {};
  const rationales: Record<string, string> = {};
  for (const [dim, v] of Object.entries(answer)) {
    scores[dim] = v.score;
    rationales[dim] = String(v[rationaleKey] ?? '');
  }
  return { scores, rationales };
}
