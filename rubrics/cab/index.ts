import type { ProtocolModule } from '../../core/protocol';
import { judgeCabUnit } from './judge';
import { planCabUnits } from './plan';
import { checkCabPrompts } from './prompts';
import { parseCabQueries } from './queries';
import { buildCabReport } from './report';
import { buildCabHtml } from './html';
import { cabRubricFromContent, loadCabRubric } from './rubric';

/**
 * CryptoAnalystBench: per query, every copilot's response is scored in ONE shared judge conversation
 * (one response per turn, order from the balanced presentation design), then all are ranked. One unit = one query.
 */
export const cabProtocol: ProtocolModule = {
  id: 'cab',
  title: 'CryptoAnalystBench',
  defaultRubricDir: __dirname,
  loadRubric: (dir) => checkCabPrompts(loadCabRubric(dir)),
  rubricFromContent: cabRubricFromContent,
  parseQueries: parseCabQueries,
  planUnits: planCabUnits,
  judgeUnit: judgeCabUnit,
  buildReport: buildCabReport,
  buildHtml: buildCabHtml,
  // One scoring turn per answer, a ranking turn when there is more than one, one taxonomy call per answer when asked for.
  judgeCallsPerQuery: (answers, options) => answers + (answers > 1 ? 1 : 0) + (options.errorTaxonomy === true ? answers : 0),
};
