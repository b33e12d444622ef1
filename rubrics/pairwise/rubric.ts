import { z } from 'zod';
import { loadDataFile } from '../../core/io/dataFiles';
import { contentHash } from '../../core/model/hashing';
import { judgeVersionOf } from '../../core/model/protocol';
import { parseWith } from '../../core/model/inputError';
import type { LoadedRubric } from '../../core/model/protocol';
import path from 'node:path';

export const pairwiseRubricSchema = z
  .object({
    protocol: z.literal('pairwise'),
    name: z.string().min(1),
    judge: z
      .object({ temperature: z.number().min(0).max(2), maxInvalidAnswers: z.number().int().min(0).max(10) })
      .strict(),
    criterion: z.string().min(1),
    prompts: z.object({ system: z.string().min(1), user: z.string().min(1) }).strict(),
  })
  .strict();

export type PairwiseRubricData = z.infer<typeof pairwiseRubricSchema>;
export interface PairwiseRubric extends LoadedRubric {
  data: PairwiseRubricData;
}

/** Everything the judge sees is in rubric.yaml, so its content is the version. */
export function pairwiseRubricFromContent(content: Record<string, unknown>, dir: string): PairwiseRubric {
  const data = parseWith(pairwiseRubricSchema, content, `${dir}/rubric.yaml`);
  return {
    protocol: 'pairwise',
    version: contentHash(data),
    judgeVersion: judgeVersionOf(data, [['name']]),
    dir,
    content: data,
    judge: data.judge,
    data,
  };
}

export const loadPairwiseRubric = (dir: string): PairwiseRubric =>
  pairwiseRubricFromContent(
    loadDataFile(z.record(z.string(), z.unknown()), path.join(dir, 'rubric.yaml'), 'rubric'),
    dir,
  );
