import type { Answer } from '../../core/study/types';
import type { ResultsStore } from '../../core/model/store';
import { hashInt } from './judges';
import { latent } from './studyRun';

const REASONS = ['accuracy', 'usefulness', 'reasoning', 'caution', 'clarity'];
const ERROR_TYPES = ['missed_intent', 'misleading_presentation', 'factual_error', 'unsafe_advice', 'other'];

/**
 * The fixed answer policy of the scripted annotators: prefer the response with the higher quality figure. The third
 * copy of every item (slot mod 3 = 2) sometimes answers otherwise (a tie, or the other side), so agreement is not
 * perfect but the majority of each item always follows the quality figures — the truth the judges are built from.
 */
export async function policyAnswer(store: ResultsStore, assignmentId: string, perItem = 3): Promise<Answer> {
  const a = (await store.studies.getAssignment(assignmentId))!;
  const queryId = a.itemId.split('|')[0];
  const [l, r] = [latent(queryId, a.left), latent(queryId, a.right)];
  let choice: Answer['choice'] = l > r ? 'A' : 'B';
  const h = hashInt(assignmentId);
  if (a.slot % perItem === 2 && h % 3 !== 0) choice = h % 3 === 1 ? 'tie' : choice === 'A' ? 'B' : 'A';
  if (choice === 'tie') return { choice, reason: null, seriousError: false, errorType: null, comment: null };
  const loser = choice === 'A' ? r : l;
  const serious = loser < 40;
  return {
    choice,
    reason: REASONS[hashInt(`${queryId}/${choice === 'A' ? a.left : a.right}`) % REASONS.length],
    seriousError: serious,
    errorType: serious ? ERROR_TYPES[h % ERROR_TYPES.length] : null,
    comment: h % 7 === 0 ? `clear winner (${h % 100})` : null,
  };
}
