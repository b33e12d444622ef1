import type { ProtocolModule } from '../../core/model/protocol';
import { cabCuration } from './curation';
import { isTaxonomyKey, judgeCabUnit, TAXONOMY_PREFIX } from './judge';
import { cabOptionsSchema, evaluationDateOf } from './options';
import { planCabAhead, readyCabUnits } from './plan';
import { checkCabPrompts } from './prompts';
import { cabLabels, cabQuerySchema, parseCabQueries } from './queries';
import { buildCabReport } from './report';
import { buildCabHtml } from './html';
import { cabRubricFromContent, loadCabRubric } from './rubric';
import { cabResponseScore } from './score';
import { cabReferenceRubric } from './reference';

/**
 * CryptoAnalystBench: per query, every copilot's response is scored in ONE shared judge conversation
 * (one response per turn, order from the balanced presentation design), then all are ranked. One unit = one query.
 */
export const cabProtocol: ProtocolModule = {
  id: 'cab',
  title: 'CryptoAnalystBench',
  defaultRubricDir: __dirname,
  optionsSchema: cabOptionsSchema,
  // A re-judge answers "what would the new rubric say about the same answers", so "today" stays the source's day.
  rejudgeOptions: (options, source) => ({ ...options, evaluationDate: evaluationDateOf(options, source) }),
  loadRubric: (dir) => checkCabPrompts(loadCabRubric(dir)),
  rubricFromContent: cabRubricFromContent,
  querySchema: cabQuerySchema,
  queryFields: ['tags', 'context'],
  parseQueries: parseCabQueries,
  labelsOf: cabLabels,
  // Error-taxonomy flags (0/1) are stored beside the dimensions as `taxonomy.<flag>` scores.
  scoreKey: (key) =>
    isTaxonomyKey(key) ? { kind: 'flag', name: key.slice(TAXONOMY_PREFIX.length) } : { kind: 'dimension' },
  // compare, gate and trend read a response's headline as the reference does: the mean of its four scores (1–10).
  responseScore: cabResponseScore,
  planAhead: planCabAhead,
  readyUnits: readyCabUnits,
  judgeUnit: judgeCabUnit,
  buildReport: buildCabReport,
  buildHtml: buildCabHtml,
  // One scoring turn per answer, a ranking turn when there is more than one, one taxonomy call per answer when asked for.
  judgeCallsPerQuery: (answers, options) =>
    answers + (answers > 1 ? 1 : 0) + (options.errorTaxonomy === true ? answers : 0),
  snapshots: { curate: cabCuration },
  // rubric: { from: cab-reference }: the reference harness's prompt texts, fetched by judgeflow dataset fetch cab.
  referenceRubrics: { 'cab-reference': cabReferenceRubric },
};
