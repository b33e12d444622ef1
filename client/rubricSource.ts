import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { LoadedRubric, ProtocolModule } from '../core/model/protocol';
import { openExistingStore, storeLocation, storeTarget } from '../stores';
import { InputError } from '../core/model/inputError';
import { readText } from '../core/io/dataFiles';
import { protocols, protocolFor } from '../rubrics';
import { storedRubric } from '../rubrics/storedRubric';

/** The protocol a rubric directory belongs to: --protocol, else its rubric.yaml's `protocol:`, else the protocol whose default it is. */
export function protocolOfDir(dir: string, protocolId?: string): ProtocolModule {
  if (protocolId) return protocolFor(protocolId);
  const abs = path.resolve(dir);
  const byDefault = protocols.find((p) => path.resolve(p.defaultRubricDir) === abs);
  if (byDefault) return byDefault;
  const file = path.join(abs, 'rubric.yaml');
  if (!fs.existsSync(file))
    throw new InputError(
      `cannot tell which protocol the rubric directory ${abs} belongs to: it holds no rubric.yaml; pass a rubric directory (e.g. a copy of rubrics/lattice or rubrics/cab)`,
    );
  let declared: unknown;
  try {
    declared = (YAML.parse(readText(file, 'rubric')) as { protocol?: unknown } | null)?.protocol;
  } catch (error) {
    if (error instanceof InputError) throw error;
    // The parser's message names the line and column of the mistake.
    throw new InputError(`${file}: not valid YAML: ${(error as Error).message}`);
  }
  if (typeof declared === 'string') return protocolFor(declared);
  throw new InputError(
    `cannot tell which protocol the rubric directory ${abs} belongs to; pass --protocol (known: ${protocols.map((p) => p.id).join(', ')})`,
  );
}

export function loadRubricDir(dir: string, protocolId?: string): LoadedRubric {
  return protocolOfDir(dir, protocolId).loadRubric(path.resolve(dir));
}

/**
 * `rubric diff` operands: a rubric directory, a rubric version stored with runs, or a run id (its rubric).
 * Returns the rubric and a label saying which one it was.
 */
export async function resolveRubricRef(
  ref: string,
  opts: { protocol?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ rubric: LoadedRubric; label: string }> {
  if (fs.existsSync(ref) && fs.statSync(ref).isDirectory())
    return { rubric: loadRubricDir(ref, opts.protocol), label: path.resolve(ref) };
  const store = await openExistingStore(opts.env);
  if (store) {
    const byVersion = await storedRubric(store, ref);
    if (byVersion) return { rubric: byVersion, label: 'stored' };
    const run = await store.getRun(ref);
    if (run) {
      const rubric = await storedRubric(store, run.rubricVersion);
      if (rubric) return { rubric, label: `run ${run.runId}` };
    }
  }
  throw new InputError(
    `"${ref}" is not a rubric directory, nor a rubric version or run id in the results store ${storeLocation(storeTarget(opts.env))}${store ? '' : ' (which does not exist yet)'}; ` +
      'see judgeflow runs for the versions stored with runs, or pass a directory holding rubric.yaml',
  );
}
