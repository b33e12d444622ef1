import { allDimensions, type ProtocolModule } from '../../core/model/protocol';
import { latticeGeneration } from './generate';
import { checkLatticePrompts, judgeLatticeResponse } from './judge';
import { judgeLatticeJoint, judgingOf, latticeOptionsSchema, planLatticeAhead, readyLatticeUnits } from './joint';
import { latticeLabels, latticeQuerySchema, parseLatticeQueries } from './queries';
import { buildLatticeReport, latticeReportIntervals } from './report';
import { buildLatticeHtml } from './html';
import { latticeReferenceRubrics } from './reference';
import { latticeRubricFromContent, loadLatticeRubric, type LatticeRubric } from './rubric';

/**
 * LATTICE: by default every response judged independently (units are single (query, copilot) pairs), as the paper
 * describes; with `lattice: { judging: joint }` one unit per query holds every answer, judged in one call as the
 * reference harness's code does (rubrics/lattice/joint.ts).
 */
export const latticeProtocol: ProtocolModule = {
  id: 'lattice',
  title: 'LATTICE',
  defaultRubricDir: __dirname,
  optionsSchema: latticeOptionsSchema,
  loadRubric: (dir) => checkLatticePrompts(loadLatticeRubric(dir)),
  rubricFromContent: latticeRubricFromContent,
  querySchema: latticeQuerySchema,
  queryFields: ['task', 'category', 'reference'],
  parseQueries: parseLatticeQueries,
  labelsOf: latticeLabels,
  scoreKey: allDimensions,
  planAhead: planLatticeAhead,
  readyUnits: readyLatticeUnits,
  async judgeUnit(unit, ctx) {
    const rubric = ctx.rubric as LatticeRubric;
    if (judgingOf(ctx.options) === 'joint') return judgeLatticeJoint(rubric, unit, ctx);
    const status = await judgeLatticeResponse(rubric, unit.queryId, unit.copilots[0], ctx);
    return status === 'ok' ? { judged: 1, failed: 0 } : { judged: 0, failed: 1 };
  },
  buildReport: buildLatticeReport,
  reportIntervals: latticeReportIntervals,
  reportRationales: 'drill',
  buildHtml: buildLatticeHtml,
  judgeCallsPerQuery: (answers, options) => (judgingOf(options) === 'joint' ? (answers > 0 ? 1 : 0) : answers),
  referenceRubrics: latticeReferenceRubrics,
  snapshots: { generate: latticeGeneration },
};
