/** The grounding checks (hallucination and citations) as rubric data plus this module; run as extra judge work items. */
export {
  DEFAULT_GROUNDING_RUBRIC_DIR,
  groundingRubricFromContent,
  loadGroundingRubric,
  type GroundingRubric,
} from './rubric';
export { groundingMessages, judgeGroundingResponse, labelOf, type GroundingJudgeContext } from './judge';
export { citationsSpec, extractionSpec, hallucinationSpec } from './schemas';
