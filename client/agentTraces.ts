import path from 'node:path';
import { agentTraceFiles } from '../core/report/agentTraces';
import { toCsv } from '../core/io/csv';
import { writeTextAtomic } from '../core/io/files';
import { InputError } from '../core/model/inputError';
import type { ResultsStore } from '../core/model/store';
import type { StoredRunConfig } from '../activities/deps';
import { whereRunsLive } from './existingStore';

/** `judgeflow export RUN --format cab-traces --out DIR`: the run's agent copilots' traces and the answers CSV naming them. */
export async function writeAgentTraces(
  store: ResultsStore,
  runId: string,
  dir: string,
): Promise<{ files: number; copilots: string[] }> {
  const run = await store.getRun(runId);
  if (!run) throw new InputError(`run ${runId} is not in this results store: ${whereRunsLive(store.location)}`);
  const config = run.config as StoredRunConfig;
  const agents = config.copilots.filter((c) => c.type === 'agent') as Array<{
    name: string;
    system?: string;
    model?: string;
  }>;
  if (!agents.length)
    throw new InputError(`run ${runId} has no agent copilot (type: agent); cab-traces exports agent trajectories`);
  const { files, csv } = agentTraceFiles({
    runId,
    queries: await store.snapshotQueries(run.snapshotId),
    responses: await store.responses(runId),
    steps: await store.runAgentSteps(runId),
    copilots: agents,
  });
  for (const f of files) writeTextAtomic(path.join(dir, f.file), JSON.stringify(f.content, null, 2) + '\n');
  writeTextAtomic(path.join(dir, 'answers.csv'), toCsv(csv));
  return { files: files.length, copilots: agents.map((a) => a.name) };
}
