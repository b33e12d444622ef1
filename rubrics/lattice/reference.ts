import crypto from 'node:crypto';
import path from 'node:path';
import type { ReferenceRubricBuilder } from '../../core/model/protocol';
import { InputError } from '../../core/model/inputError';
import { readText } from '../../core/io/dataFiles';
import { latticeRubricFromContent, loadLatticeRubric, type LatticeRubric } from './rubric';
import { checkLatticePrompts } from './judge';

/** The reference harness's judge instructions, as `judgeflow dataset fetch lattice` names them. */
export const LATTICE_INSTRUCTIONS_FILE = 'judge_instructions_en.txt';
export const LATTICE_DATASET_DEFAULT_DIR = path.join('datasets', 'lattice');

/**
 * The user message in the reference harness's layout (scoring/batch.py judge_many: [Task], [Category], [Query] and
 * [Agent Answers] blocks, each answer an [Agent] block), holding one answer: judgeflow judges each response on its own,
 * as the paper describes, and the agent's name is a blind label, never the copilot's.
 */
const REFERENCE_USER_LAYOUT = [
  '[Task]\n<<<\n{{task_id}} {{task_name}}\n>>>',
  '[Category]\n<<<\n{{category_id}} {{category_name}}\n>>>',
  '{{history}}[Query]\n<<<\n{{query}}\n>>>',
  '[Agent Answers]\n<<<\n[Agent]\nname: agent-1\nanswer:\n<<<\n{{response}}\n>>>\n>>>',
].join('\n\n');

/**
 * A rubric version whose system prompt is the reference's judge instructions file, verbatim, read at run time (the
 * project ships none of its text). Tasks, categories, weights and judge settings are judgeflow's LATTICE rubric's (the
 * same ids, names and weights as the reference). The score keys stay judgeflow's (D1–D6, Refusal for the reference's
 * T16-1): the answer schema asks for them, whatever output shape the instructions describe.
 */
export function latticeReferenceRubric(file: string): LatticeRubric {
  const text = readText(file, 'the LATTICE reference judge instructions');
  const missing = ['D1', 'D6', 'T16'].filter((marker) => !text.includes(marker));
  if (missing.length)
    throw new InputError(
      `${file}: not the LATTICE reference judge instructions (${LATTICE_INSTRUCTIONS_FILE}): it never mentions ${missing.join(', ')}; fetch it with judgeflow dataset fetch lattice`,
    );
  if (text.includes('{{'))
    throw new InputError(
      `${file}: contains "{{", which judgeflow's prompt templates would read as a placeholder; use the file as published`,
    );
  const base = loadLatticeRubric(__dirname);
  // No rules, anchors or caps of judgeflow's own: the instructions file carries the reference's.
  const data = {
    ...base.data,
    rules: [],
    caps: [],
    prompts: { system: LATTICE_INSTRUCTIONS_FILE, user: '(reference layout)' },
  };
  const content = {
    data,
    prompts: { system: text, user: REFERENCE_USER_LAYOUT },
    source: {
      from: 'lattice-reference',
      file: path.basename(file),
      sha256: crypto.createHash('sha256').update(text).digest('hex'),
    },
  };
  return checkLatticePrompts(latticeRubricFromContent(content, path.dirname(file)));
}

export const latticeReferenceRubrics: Record<string, ReferenceRubricBuilder> = {
  'lattice-reference': {
    describe: `the reference judge instructions (${LATTICE_INSTRUCTIONS_FILE})`,
    defaultFile: path.join(LATTICE_DATASET_DEFAULT_DIR, LATTICE_INSTRUCTIONS_FILE),
    build: latticeReferenceRubric,
  },
};
