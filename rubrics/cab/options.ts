import { z } from 'zod';
import type { RunRecord } from '../../core/model/store';

/** YYYY-MM-DD naming a day that exists (no month 13, no 31 April, 29 February only in leap years). */
function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return true; // the format is the regex's to report
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The config's `cab:` section. */
export const cabOptionsSchema = z
  .object({
    evaluationDate: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, 'use YYYY-MM-DD, e.g. 2026-03-05')
      .refine(isCalendarDate, {
        error: (issue) =>
          `evaluationDate ${String(issue.input)} is not a real calendar date; use YYYY-MM-DD, e.g. 2026-03-05`,
      })
      .optional()
      .describe(
        'The date (YYYY-MM-DD) the judge treats as "today" for temporal relevance; default: the UTC day the run started.',
      ),
    errorTaxonomy: z
      .boolean()
      .default(false)
      .describe(
        'Also judge the seven binary error flags per collected response, whether or not its scoring succeeded (one extra judge call each).',
      ),
    answerTimestamps: z
      .boolean()
      .default(false)
      .describe(
        "Show the judge when each answer was written (the blog's variant); the reference harness sends only the evaluation date.",
      ),
  })
  .strict();

export type CabOptions = z.infer<typeof cabOptionsSchema>;

/**
 * The date the judge treats as "today": the config's evaluationDate, else the day the run started (UTC).
 * Both are stored with the run, so a resumed or retried activity uses the same date.
 */
export function evaluationDateOf(options: Record<string, unknown>, run: Pick<RunRecord, 'startedAt'>): string {
  const configured = options.evaluationDate;
  return typeof configured === 'string' && configured.trim() ? configured.trim() : run.startedAt.slice(0, 10);
}
