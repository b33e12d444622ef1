import { z } from 'zod';
import { allDimensions, type ProtocolModule } from '../../core/protocol';
import { latticeGeneration } from './generate';
import { checkLatticePrompts, judgeLatticeResponse } from './judge';
import { latticeLabels, latticeQuerySchema, parseLatticeQueries } from './queries';
import { buildLatticeReport } from './report';
import { buildLatticeHtml } from './html';
import { latticeReferenceRubrics } from './reference';
import { latticeRubricFromContent, loadLatticeRubric, type LatticeRubric } from './rubric';

/** LATTICE: every response judged independently; units are single (query, copilot) pairs. */
export const latticeProtocol: ProtocolModule = {
  id: 'lattice',
  title: 'LATTICE',
  defaultRubricDir: __dirname,
  optionsSchema: z.object({}).strict(),
  loadRubric: (dir) => checkLatticePrompts(loadLatticeRubric(dir)),
  rubricFromContent: latticeRubricFromContent,
  querySchema: latticeQuerySchema,
  queryFields: ['task', 'category'],
  parseQueries: parseLatticeQueries,
  labelsOf: latticeLabels,
  scoreKey: allDimensions,
  readyUnits: ({ query, responses }) => responses.filter((r) => r.status === 'ok').map((r) => ({ queryId: query.id, copilots: [r.copilot] })),
  async judgeUnit(unit, ctx) {
    const status = await judgeLatticeResponse(ctx.rubric as LatticeRubric, unit.queryId, unit.copilots[0], ctx);
    return status === 'ok' ? { judged: 1, failed: 0 } : { judged: 0, failed: 1 };
  },
  buildReport: buildLatticeReport,
  buildHtml: buildLatticeHtml,
  judgeCallsPerQuery: (answers) => answers,
  referenceRubrics: latticeReferenceRubrics,
  snapshots: { generate: latticeGeneration },
};
