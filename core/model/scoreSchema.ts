import { z } from 'zod';

/**
 * A spec built once per key and kept: building a zod object schema, and the code zod compiles for it on its first
 * parse, cost more than the parse itself (about 0.5 ms a judge call when built afresh each time). The JSON schema is
 * frozen, so no caller can change what later calls send. Keys are few (a rubric's dimension lists × labels).
 */
export function memoSpec<S extends { jsonSchema: unknown }>(cache: Map<string, S>, key: string, build: () => S): S {
  let spec = cache.get(key);
  if (!spec) {
    spec = build();
    deepFreeze(spec.jsonSchema);
    if (cache.size >= 1_000) cache.clear(); // bounded, whatever the caller's keys
    cache.set(key, spec);
  }
  return spec;
}

function deepFreeze(value: unknown): void {
  if (!value || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

const dimensionSpecs = new Map<string, ReturnType<typeof buildDimensionScoresSpec>>();

/** JSON schema + zod schema for `{ <dim>: { score: int, rationale: string } }`, the shape every judge answers in. */
export function dimensionScoresSpec(dimensionIds: string[], min: number, max: number, rationaleKey = 'rationale') {
  return memoSpec(dimensionSpecs, JSON.stringify([dimensionIds, min, max, rationaleKey]), () =>
    buildDimensionScoresSpec(dimensionIds, min, max, rationaleKey),
  );
}

function buildDimensionScoresSpec(dimensionIds: string[], min: number, max: number, rationaleKey: string) {
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
