import fs from 'node:fs';
import path from 'node:path';
import { cliInProcess } from '../../support/cliInProcess';
import { tempDir, withWorker } from '../../support/harness';
import { cabDatasetRows } from '../../support/cabDataset';
import { simServersForFile } from '../../support/sims';

/** Snapshot curation against DeepSeek's behaviour: JSON mode with the tagging schema in the prompt, never json_schema. */
const sim = simServersForFile({ tagger: {} });

test('snapshot curate --provider deepseek tags every query through JSON mode, the schema in the prompt', async () => {
  await withWorker('providers-curate-deepseek', async ({ taskQueue, storeFile }) => {
    const dir = tempDir();
    const traffic = path.join(dir, 'traffic.jsonl');
    const queries = cabDatasetRows()
      .slice(0, 12)
      .map((r) => r.query);
    fs.writeFileSync(
      traffic,
      queries
        .map((query, i) => JSON.stringify({ query, timestamp: new Date(Date.UTC(2025, 4, 1, 0, i)).toISOString() }))
        .join('\n') + '\n',
    );
    const before = sim.tagger.requests.length;
    const { code, stdout, stderr } = await cliInProcess(
      [
        'snapshot',
        'curate',
        '--from',
        traffic,
        '--target',
        '5',
        '--provider',
        'deepseek',
        '--base-url',
        sim.tagger.url,
        '--model',
        'sim-deepseek',
        '--batch-size',
        '6',
        '--seed',
        's1',
        '--json',
      ],
      { JUDGEFLOW_STORE: storeFile, JUDGEFLOW_TASK_QUEUE: taskQueue },
    );
    expect({ code, stderr: code ? stderr : '' }).toEqual({ code: 0, stderr: '' });
    const categorise = JSON.parse(stdout).stages.find((s: any) => s.stage === 'categorise');
    expect(categorise).toMatchObject({ untagged: 0, requests: 2 });
    const bodies = sim.tagger.requests.slice(before).map((r) => r.body);
    expect(bodies).toHaveLength(2);
    for (const b of bodies) {
      expect(b.response_format).toEqual({ type: 'json_object' });
      expect(b.messages[0].content).toContain('"labels"');
    }
  });
}, 120_000);
