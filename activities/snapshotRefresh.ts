import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../core/model/inputError';
import type { ActivityDeps } from './deps';
import { nonRetryableInput } from './failures';

/** Activities of a scheduled refresh: find the parent and the newest traffic file, record the lineage. */

const TRAFFIC_EXT = /\.(jsonl|ndjson|csv)$/i;

function globRegex(pattern: string): RegExp {
  const body = pattern
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}

/** A file as is; a directory → its .jsonl/.ndjson/.csv files; a glob (wildcards in the last part only) → its matches. */
export function trafficCandidates(from: string): string[] {
  if (/[*?]/.test(path.dirname(from)))
    throw new InputError(`--from ${from}: wildcards are supported in the file name only`);
  if (/[*?]/.test(path.basename(from))) {
    const dir = path.dirname(from);
    if (!fs.existsSync(dir)) throw new InputError(`--from ${from}: directory ${dir} does not exist`);
    const re = globRegex(path.basename(from));
    return fs
      .readdirSync(dir)
      .filter((f) => re.test(f))
      .map((f) => path.join(dir, f))
      .filter((f) => fs.statSync(f).isFile());
  }
  if (!fs.existsSync(from)) throw new InputError(`--from ${from}: no such file or directory`);
  if (fs.statSync(from).isDirectory())
    return fs
      .readdirSync(from)
      .filter((f) => TRAFFIC_EXT.test(f))
      .map((f) => path.join(from, f))
      .filter((f) => fs.statSync(f).isFile());
  return [from];
}

/** The newest traffic file: latest modification time, then the name that sorts last (dated names). */
export function newestTrafficFile(from: string): string {
  const files = trafficCandidates(from);
  if (!files.length) throw new InputError(`--from ${from}: no traffic file (.jsonl, .ndjson or .csv) found`);
  return files
    .map((f) => ({ f, t: fs.statSync(f).mtimeMs }))
    .sort((a, b) => b.t - a.t || (a.f < b.f ? 1 : a.f > b.f ? -1 : 0))[0].f;
}

export function refreshActivities(deps: ActivityDeps) {
  const { store } = deps;
  return {
    /** The previous snapshot of this schedule (the new one's parent) and, for curation, the newest traffic file. */
    async refreshPrepare({
      schedule,
      from,
      parentId,
    }: {
      schedule: string;
      from?: string;
      parentId?: string | null;
    }): Promise<{ parentId: string | null; source?: string }> {
      const previous = (await store.scheduleSnapshots(schedule))[0]?.snapshotId ?? parentId ?? null;
      if (!from) return { parentId: previous };
      return nonRetryableInput(() => ({ parentId: previous, source: newestTrafficFile(from) }));
    },

    async refreshRecord(row: {
      schedule: string;
      workflowId: string;
      snapshotId: string;
      parentId: string | null;
    }): Promise<void> {
      await store.recordScheduleSnapshot({ ...row, createdAt: new Date().toISOString(), runId: null });
    },

    async refreshRecordRun({
      schedule,
      workflowId,
      runId,
    }: {
      schedule: string;
      workflowId: string;
      runId: string;
    }): Promise<void> {
      await store.setScheduleRun(schedule, workflowId, runId);
    },
  };
}
