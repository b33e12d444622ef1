import { diffContent, renderDiff, renderOutline, rubricOutline } from '../../core/model/rubricOutline';
import { InputError } from '../../core/model/inputError';
import { protocolFor } from '../../rubrics';
import type { Command } from '../args';
import { loadRubricDir, resolveRubricRef } from '../rubricSource';

const usage =
  'judgeflow rubric show [--protocol P] [--rubric DIR] [--json]\n       judgeflow rubric diff A B [--protocol P] [--json]   (A, B: rubric directory, stored rubric version, or run id)';

export const rubricCommand: Command = {
  name: 'rubric',
  summary: "show a rubric's version and what it covers, or diff two rubric versions",
  usage,
  options: { protocol: { type: 'string' }, rubric: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals }) {
    const [action, ...refs] = positionals;
    const protocol = typeof values.protocol === 'string' ? values.protocol : undefined;
    if (action === 'show') {
      if (refs.length)
        throw new InputError(
          `rubric show takes no positional arguments (got ${refs.join(' ')}); use --rubric DIR\nUsage: ${usage}`,
        );
      const dir = typeof values.rubric === 'string' ? values.rubric : undefined;
      const rubric = dir
        ? loadRubricDir(dir, protocol)
        : protocolFor(protocol ?? 'lattice').loadRubric(protocolFor(protocol ?? 'lattice').defaultRubricDir);
      const outline = rubricOutline(rubric);
      console.log(values.json ? JSON.stringify(outline, null, 2) : renderOutline(outline));
      return 0;
    }
    if (action === 'diff') {
      if (refs.length !== 2)
        throw new InputError(`rubric diff needs exactly two operands A and B (got ${refs.length})\nUsage: ${usage}`);
      const a = await resolveRubricRef(refs[0], { protocol });
      const b = await resolveRubricRef(refs[1], { protocol });
      if (a.rubric.protocol !== b.rubric.protocol)
        throw new InputError(
          `cannot diff a ${a.rubric.protocol} rubric (${refs[0]}) with a ${b.rubric.protocol} rubric (${refs[1]})`,
        );
      const changes = diffContent(a.rubric.content, b.rubric.content);
      if (values.json)
        console.log(
          JSON.stringify(
            {
              a: { version: a.rubric.version, source: a.label },
              b: { version: b.rubric.version, source: b.label },
              changes,
            },
            null,
            2,
          ),
        );
      else
        console.log(
          renderDiff(
            { label: a.label, version: a.rubric.version },
            { label: b.label, version: b.rubric.version },
            changes,
          ),
        );
      return 0;
    }
    throw new InputError(`unknown action "${action ?? ''}"; expected show or diff\nUsage: ${usage}`);
  },
};
