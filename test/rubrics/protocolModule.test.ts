import fs from 'node:fs';
import path from 'node:path';
import { protocolOptions, type StoredRunConfig } from '../../activities/deps';
import { historyWarnings, loadRunConfig } from '../../client/config';
import { cabProtocol } from '../../rubrics/cab';
import { latticeProtocol } from '../../rubrics/lattice';
import { tempDir } from '../support/harness';

test("a run's protocol options come from its section, and from the top level of configs stored before sections existed", () => {
  const base = { protocol: 'cab' } as unknown as StoredRunConfig;
  expect(
    protocolOptions(cabProtocol, {
      ...base,
      cab: { evaluationDate: '2026-01-02', errorTaxonomy: true },
    } as StoredRunConfig),
  ).toEqual({ evaluationDate: '2026-01-02', errorTaxonomy: true, answerTimestamps: false });
  expect(
    protocolOptions(cabProtocol, { ...base, evaluationDate: '2025-06-01', errorTaxonomy: true } as StoredRunConfig),
  ).toEqual({ evaluationDate: '2025-06-01', errorTaxonomy: true, answerTimestamps: false });
  expect(protocolOptions(cabProtocol, base)).toEqual({ errorTaxonomy: false, answerTimestamps: false });
  expect(protocolOptions(latticeProtocol, { ...base, protocol: 'lattice' })).toEqual({ judging: 'independent' });
});

describe('a query with history sent to a copilot that cannot send it', () => {
  const history = [{ role: 'user' as const, content: 'I hold 2 ETH.' }];
  const queries = [
    { id: 'a', text: 'Stake it?', history },
    { id: 'b', text: 'Now?' },
  ];

  test('warns for csv and browser copilots, not for openai and http ones', () => {
    const copilots = [
      { name: 'Api', type: 'openai' },
      { name: 'Sheet', type: 'csv' },
      { name: 'Web', type: 'browser' },
      { name: 'Json', type: 'http' },
    ] as never;
    const warnings = historyWarnings({ copilots }, queries);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      /1 of 2 queries carry earlier turns \(history\), but copilot "Sheet" \(type csv\) cannot send them/,
    );
    expect(warnings[1]).toMatch(/copilot "Web" \(type browser\)/);
    expect(historyWarnings({ copilots }, [{ id: 'b', text: 'Now?' }])).toEqual([]);
  });

  test('loading the config reports it, naming the config file', () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'q.jsonl'),
      queries.map((q) => JSON.stringify({ ...q, task: 'T1', category: 'C1' })).join('\n') + '\n',
    );
    fs.writeFileSync(path.join(dir, 'answers.csv'), 'query,Sheet_response\nStake it?,yes\nNow?,no\n');
    const file = path.join(dir, 'cfg.yaml');
    fs.writeFileSync(
      file,
      'protocol: lattice\nqueries: q.jsonl\njudge: { baseURL: http://127.0.0.1:9/v1, model: j }\ncopilots:\n  - { name: Sheet, type: csv, path: answers.csv }\n',
    );
    const warnings: string[] = [];
    loadRunConfig(file, (m) => warnings.push(m));
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^warning: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: 1 of 2 queries carry earlier turns`),
      ),
    ]);
  });
});
