import { z } from 'zod';

/** The answer options of a pairwise preference study (the data is rubrics/study/options.yaml), validated with this schema. */
const id = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'ids are 1-40 letters, digits, "_" or "-"');
const key = z
  .string()
  .regex(/^[a-z0-9]$/, 'a keyboard shortcut is one lower-case letter or digit')
  .optional();

export const studyOptionsSchema = z
  .object({
    choices: z
      .array(z.object({ id: z.enum(['A', 'B', 'tie']), label: z.string().min(1), key }).strict())
      .length(3)
      .refine((cs) => new Set(cs.map((c) => c.id)).size === 3, 'choices must be exactly A, B and tie'),
    reasons: z.array(z.object({ id, label: z.string().min(1), description: z.string().min(1), key }).strict()).min(1),
    errorTypes: z.array(z.object({ id, label: z.string().min(1) }).strict()).min(1),
  })
  .strict()
  .superRefine((o, ctx) => {
    for (const [field, list] of [
      ['reasons', o.reasons],
      ['errorTypes', o.errorTypes],
    ] as const) {
      const seen = new Set<string>();
      list.forEach((x, i) => {
        if (seen.has(x.id)) ctx.addIssue({ code: 'custom', path: [field, i, 'id'], message: `duplicate id "${x.id}"` });
        seen.add(x.id);
      });
    }
    const keys = [...o.choices, ...o.reasons].map((x) => x.key).filter(Boolean);
    if (new Set(keys).size !== keys.length)
      ctx.addIssue({ code: 'custom', path: [], message: 'keyboard shortcuts of choices and reasons must differ' });
  });

export type StudyOptions = z.infer<typeof studyOptionsSchema>;
