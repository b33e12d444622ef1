import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../core/io/files';
import { artefactFileName, artefactRef, type ArtefactInfo, type ResultsStore } from '../core/model/store';
import type { AdapterContext } from './adapters/types';

/**
 * Artefacts (a browser copilot's failure screenshots) live in the results store, so whichever machine reports on a run
 * can read them; these are the two ends: an adapter's way in, and files on the way out.
 */

/** What a run's adapters are given to keep an artefact: stored under the run, referred to as `artefact:<id>`. */
export function artefactSaver(store: ResultsStore, runId: string): NonNullable<AdapterContext['saveArtefact']> {
  return async (artefact) => artefactRef(await store.putArtefact({ runId, ...artefact }));
}

/** Write every artefact of a run into `dir` (each written whole, then renamed into place); returns what was written where. */
export async function writeArtefacts(
  store: ResultsStore,
  runId: string,
  dir: string,
): Promise<Array<ArtefactInfo & { file: string }>> {
  const written: Array<ArtefactInfo & { file: string }> = [];
  for (const info of await store.artefacts(runId)) {
    const artefact = await store.getArtefact(info.artefactId);
    if (!artefact) continue;
    const file = path.join(dir, artefactFileName(info));
    await writeFileAtomic(file, (tmp) => fs.promises.writeFile(tmp, artefact.bytes));
    written.push({ ...info, file });
  }
  return written;
}
