import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON, type History } from '@temporalio/common/lib/proto-utils';

/** Recorded workflow histories replayed by test/replay.test.ts; refreshed by scripts/record-histories.ts. */
export const HISTORY_DIR = path.resolve(__dirname, '..', 'histories');

/** One scenario (a run: its parent workflow and every child) per file. */
export interface HistoryFile {
  scenario: string;
  description: string;
  recordedAt: string;
  sdk: string;
  workflows: Array<{ workflowId: string; workflowType: string; history: unknown /* proto JSON, as `temporal workflow show --output json` prints */ }>;
}

export function readHistoryFiles(dir = HISTORY_DIR): Array<{ file: string; content: HistoryFile }> {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ file: path.join(dir, f), content: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as HistoryFile }));
}

export function replayInputs(file: HistoryFile): Array<{ workflowId: string; history: History }> {
  return file.workflows.map((w) => ({ workflowId: w.workflowId, history: historyFromJSON(w.history) }));
}
