import type { Query, StoredJudgment } from '../../core/model/types';
import { isTaxonomyKey, taxonomyKey } from './judge';
import { CAB_DIMENSIONS, type CabRubric } from './rubric';

/** The reference's cut-off: a dimension score at or below this is a low score worth explaining. */
export const LOW_SCORE = 8;
const EXAMPLES = 3;

/** One group of the error-clustering sheet: a copilot's low scores on one dimension that share one error flag. */
export interface ErrorCluster {
  copilot: string;
  dimension: string;
  /** The error-taxonomy flag present in these responses; null for low scores with no flag set (or no taxonomy judged). */
  flag: string | null;
  occurrences: number;
  /** The copilot's responses scoring ≤ 8 on this dimension. */
  lowScores: number;
  /** Queries the copilot was scored on. */
  queries: number;
  exampleQueries: string[];
  /** The judge's reasoning for the flag (or for the dimension's score, in the "no flag" group). */
  exampleIssues: string[];
}

/**
 * The error-clustering sheet: per copilot and dimension, the responses scoring ≤ 8 (as the reference selects them),
 * grouped by the error-taxonomy flags the judge set on them. The reference asks the judge to cluster the low scores'
 * reasonings into error types of its own; judgeflow groups by the seven defined flags instead, so the groups are the
 * same from run to run and cost no further call. A response with several flags counts in each of their groups.
 */
export function errorClusters(
  rubric: CabRubric,
  queries: Query[],
  copilots: string[],
  judgments: StoredJudgment[],
): ErrorCluster[] {
  const text = new Map(queries.map((q) => [q.id, q.text]));
  const out: ErrorCluster[] = [];
  for (const copilot of copilots) {
    const ok = judgments.filter((j) => j.copilot === copilot && j.status === 'ok' && j.scores && text.has(j.queryId));
    for (const dimension of CAB_DIMENSIONS) {
      const low = ok.filter((j) => j.scores![dimension] <= LOW_SCORE);
      if (!low.length) continue;
      const groups: Array<{
        flag: string | null;
        members: StoredJudgment[];
        issue: (j: StoredJudgment) => string | undefined;
      }> = [
        ...rubric.data.taxonomy.map((f) => ({
          flag: f.id,
          members: low.filter((j) => j.scores![taxonomyKey(f.id)] === 1),
          issue: (j: StoredJudgment) => j.rationales?.[taxonomyKey(f.id)],
        })),
        {
          flag: null,
          members: low.filter((j) => !Object.entries(j.scores!).some(([k, v]) => isTaxonomyKey(k) && v === 1)),
          issue: (j: StoredJudgment) => j.rationales?.[dimension],
        },
      ];
      for (const g of groups) {
        if (!g.members.length) continue;
        out.push({
          copilot,
          dimension,
          flag: g.flag,
          occurrences: g.members.length,
          lowScores: low.length,
          queries: ok.length,
          exampleQueries: g.members.slice(0, EXAMPLES).map((j) => text.get(j.queryId)!),
          exampleIssues: g.members.slice(0, EXAMPLES).map((j) => g.issue(j) ?? ''),
        });
      }
    }
  }
  return out;
}

export const CLUSTER_HEADER = [
  'Model',
  'Metric',
  'Error Type',
  'Description',
  'Occurrence Count',
  'Total Low Scores',
  'Total Queries',
  'Example Queries',
  'Example Issues',
];

export function clusterRows(rubric: CabRubric, clusters: ErrorCluster[]): Array<Array<string | number>> {
  const dimName = (id: string) => rubric.data.dimensions.find((d) => d.id === id)?.name ?? id;
  const flag = (id: string | null) => (id === null ? undefined : rubric.data.taxonomy.find((f) => f.id === id));
  return clusters.map((c) => [
    c.copilot,
    dimName(c.dimension),
    flag(c.flag)?.name ?? 'No error flag set',
    flag(c.flag)?.meaning ??
      'Scored ≤ 8 on this dimension with none of the seven error flags present (or the error taxonomy was not judged)',
    c.occurrences,
    c.lowScores,
    c.queries,
    c.exampleQueries.join('; '),
    c.exampleIssues.join('; '),
  ]);
}
