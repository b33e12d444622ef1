import { z } from 'zod';
import type { ProtocolModule } from '../../core/model/protocol';
import { buildPairwiseHtml } from './html';
import { checkPairwisePrompts, judgePairwiseUnit, OPPONENT_PREFIX } from './judge';
import { pairwiseLabels, pairwiseQuerySchema, parsePairwiseQueries } from './queries';
import { buildPairwiseReport } from './report';
import { loadPairwiseRubric, pairwiseRubricFromContent } from './rubric';

/**
 * Pairwise preference: per query, every pair of copilots' responses is shown to the judge, blinded as "A" and "B",
 * and the judge prefers one or calls a tie. One unit = one query; reports give win rates.
 */
export const pairwiseProtocol: ProtocolModule = {
  id: 'pairwise',
  title: 'Pairwise preference',
  defaultRubricDir: __dirname,
  optionsSchema: z.object({}).strict(),
  loadRubric: (dir) => checkPairwisePrompts(loadPairwiseRubric(dir)),
  rubricFromContent: pairwiseRubricFromContent,
  querySchema: pairwiseQuerySchema,
  queryFields: ['topic'],
  parseQueries: parsePairwiseQueries,
  labelsOf: pairwiseLabels,
  // `preference` is the dimension; `vs.<opponent>` outcomes (0, ½, 1) are compared as rates.
  scoreKey: (key) => (key.startsWith(OPPONENT_PREFIX) ? { kind: 'flag', name: key } : { kind: 'dimension' }),
  /**
   * Once every copilot has answered the query (or failed for good): the copilots with an answer in config order, reversed
   * on odd query positions, so each copilot of a pair is shown first equally often.
   */
  readyUnits({ query, position, responses, copilots }) {
    if (copilots.some((c) => !responses.some((r) => r.copilot === c))) return [];
    const present = copilots.filter((c) => responses.some((r) => r.copilot === c && r.status === 'ok'));
    return present.length >= 2
      ? [{ queryId: query.id, copilots: position % 2 ? [...present].reverse() : present }]
      : [];
  },
  judgeUnit: judgePairwiseUnit,
  buildReport: buildPairwiseReport,
  buildHtml: buildPairwiseHtml,
  reportUnits: true,
  // One judge call per pair of answers.
  judgeCallsPerQuery: (answers) => (answers * (answers - 1)) / 2,
};
