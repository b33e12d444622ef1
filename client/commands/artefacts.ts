import path from 'node:path';
import { writeArtefacts } from '../../activities/artefacts';
import { artefactFileName, artefactRef } from '../../core/model/store';
import { assertWritableDir } from '../../core/io/writableDir';
import { InputError } from '../../core/model/inputError';
import { openExistingStore } from '../../stores';
import type { Command } from '../args';
import { whereRunsLive } from '../existingStore';

export const artefactsCommand: Command = {
  name: 'artefacts',
  summary: "list a run's artefacts (browser failure screenshots) in the results store, or write them to files",
  usage: 'judgeflow artefacts RUN_ID [--out DIR] [--json]   (without --out: list them; errors name them artefact:<id>)',
  options: { out: { type: 'string', short: 'o' }, json: { type: 'boolean' } },
  async run({ values, positionals }) {
    const runId = positionals[0];
    if (!runId) throw new InputError(`missing RUN_ID\nUsage: ${this.usage}`);
    const store = await openExistingStore();
    if (!store || !(await store.getRun(runId)))
      throw new InputError(`run ${runId} is not in this results store: ${whereRunsLive()}`);
    const out = typeof values.out === 'string' ? path.resolve(values.out) : undefined;
    if (out) assertWritableDir(out, '--out');
    const listed = out
      ? await writeArtefacts(store, runId, out)
      : (await store.artefacts(runId)).map((a) => ({ ...a, file: artefactFileName(a) }));
    if (values.json)
      console.log(
        JSON.stringify(
          listed.map((a) => ({
            ref: artefactRef(a.artefactId),
            name: a.name,
            contentType: a.contentType,
            size: a.size,
            createdAt: a.createdAt,
            ...(out ? { file: a.file } : {}),
          })),
          null,
          2,
        ),
      );
    else if (!listed.length) console.log(`Run ${runId} has no artefacts.`);
    else
      for (const a of listed)
        console.log(
          `${artefactRef(a.artefactId)}  ${a.contentType}  ${a.size} bytes  ${a.createdAt}  ${out ? a.file : a.name}`,
        );
    return 0;
  },
};
