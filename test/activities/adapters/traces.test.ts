import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvAdapter, validateCsvCopilot } from '../../../activities/adapters/csv';
import {
  answerOf,
  attribute,
  contextOf,
  readTrace,
  REFERENCE_SPAN_NAME,
  spansOf,
  tracesSchema,
} from '../../../activities/adapters/traces';
import { toCsv } from '../../../core/io/csv';
import { adapterFailure } from '../../support/adapterError';
import { cabDatasetRows, testWithRealCabDataset } from '../../support/cabDataset';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'judgeflow-traces-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const config = (over: Record<string, unknown> = {}) => tracesSchema.parse({ dir, ...over });
function writeTrace(copilot: string, chatId: string, data: unknown): void {
  mkdirSync(join(dir, copilot, 'traces'), { recursive: true });
  writeFileSync(join(dir, copilot, 'traces', `${chatId}.json`), typeof data === 'string' ? data : JSON.stringify(data));
}

/** A trace as the reference harness writes it: flat attribute keys, the final-response span among others. */
const referenceTrace = (context: string, answer: string) => ({
  session_id: 's',
  traces: [
    {
      trace_id: 't1',
      spans: [
        { name: 'search tool', 'attributes.input.value': 'BTC price', 'attributes.output.value': 'irrelevant' },
        {
          name: REFERENCE_SPAN_NAME,
          'attributes.input.value': {
            messages: [
              { role: 'system', content: 'You are an analyst.' },
              { role: 'user', content: context },
            ],
          },
          'attributes.output.value': { choices: [{ message: { role: 'assistant', content: answer } }] },
        },
      ],
    },
  ],
});

test('the reference layout: context is the span input’s last message, the answer its output’s message content', () => {
  expect(config().spanName).toBe('Cyrpto Final Response');
  writeTrace('Sentient', 'c1', referenceTrace('BTC price: $97,000', 'BTC trades at $97,000.'));
  expect(readTrace(config(), 'Sentient', 'c1')).toMatchObject({
    context: 'BTC price: $97,000',
    answer: 'BTC trades at $97,000.',
  });
  // Another copilot, another chat id, another span name: nothing.
  expect(readTrace(config(), 'Other', 'c1')).toBeNull();
  expect(readTrace(config(), 'Sentient', 'c2')).toBeNull();
  expect(readTrace(config({ spanName: 'Final' }), 'Sentient', 'c1')).toBeNull();
});

test('exports keep payloads as JSON text; non-chat inputs are taken as they are (strings) or as JSON', () => {
  const span = (input: unknown, output: unknown) => ({
    traces: [
      { spans: [{ name: REFERENCE_SPAN_NAME, 'attributes.input.value': input, 'attributes.output.value': output }] },
    ],
  });
  writeTrace(
    'A',
    'text',
    span(
      JSON.stringify({ messages: [{ role: 'user', content: 'from text' }] }),
      JSON.stringify({ choices: [{ message: { content: 'answer text' } }] }),
    ),
  );
  expect(readTrace(config(), 'A', 'text')).toMatchObject({ context: 'from text', answer: 'answer text' });
  writeTrace('A', 'plain', span('plain context', 'plain answer'));
  expect(readTrace(config(), 'A', 'plain')).toMatchObject({ context: 'plain context', answer: 'plain answer' });
  writeTrace('A', 'object', span({ tool: 'price', result: 1 }, null));
  const read = readTrace(config(), 'A', 'object')!;
  expect(JSON.parse(read.context!)).toEqual({ tool: 'price', result: 1 });
  expect(read.answer).toBeUndefined();
  // The message content itself may be structured (content parts): kept as JSON.
  expect(contextOf({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] })).toBe(
    JSON.stringify([{ type: 'text', text: 'x' }], null, 2),
  );
});

test('OpenInference / OpenTelemetry exports: nested attributes, key/value attribute lists, resourceSpans, Langfuse observations', () => {
  const nested = {
    name: REFERENCE_SPAN_NAME,
    attributes: { input: { value: 'nested ctx' }, output: { value: 'nested answer' } },
  };
  const flatInside = {
    name: REFERENCE_SPAN_NAME,
    attributes: { 'input.value': 'phoenix ctx', 'output.value': 'phoenix answer' },
  };
  const otel = {
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: [
              {
                name: REFERENCE_SPAN_NAME,
                attributes: [
                  {
                    key: 'input.value',
                    value: { stringValue: JSON.stringify({ messages: [{ role: 'user', content: 'otel ctx' }] }) },
                  },
                  { key: 'output.value', value: { stringValue: 'otel answer' } },
                ],
              },
            ],
          },
        ],
      },
    ],
  };
  const langfuse = {
    data: [
      { name: 'tool', input: 'x', output: 'y' },
      {
        name: REFERENCE_SPAN_NAME,
        input: { messages: [{ role: 'user', content: 'langfuse ctx' }] },
        output: 'langfuse answer',
      },
    ],
  };
  for (const [id, doc, context, answer] of [
    ['nested', [nested], 'nested ctx', 'nested answer'],
    ['phoenix', { spans: [flatInside] }, 'phoenix ctx', 'phoenix answer'],
    ['otel', otel, 'otel ctx', 'otel answer'],
    ['langfuse', langfuse, 'langfuse ctx', 'langfuse answer'],
  ] as const) {
    writeTrace('A', id, doc);
    expect(readTrace(config(), 'A', id)).toMatchObject({ context, answer });
  }
  expect(spansOf(langfuse).map((s) => s.name)).toEqual(['tool', REFERENCE_SPAN_NAME]);
  expect(attribute({ name: 'x' }, 'input.value')).toBeUndefined();
  expect(answerOf({ choices: [] })).toBeUndefined();
});

test('a broken trace file or an unsafe chat id is a clear error naming it', () => {
  writeTrace('A', 'bad', '{"traces": [');
  expect(() => readTrace(config(), 'A', 'bad')).toThrow(/trace file .*bad\.json is not valid JSON/);
  expect(() => readTrace(config(), 'A', '../etc/passwd')).toThrow(/chat id "..\/etc\/passwd" cannot name a trace file/);
});

test('a CSV copilot with traces: the answer from the CSV or else the trace, the context from the trace; a row without a trace has none', async () => {
  const csv = join(dir, 'answers.csv');
  writeFileSync(
    csv,
    toCsv([
      ['query', 'Agent_response', 'Agent_chat_id'],
      ['q one', '', 'c1'],
      ['q two', 'CSV answer', 'c2'],
      ['q three', 'only CSV', 'c3'],
    ]),
  );
  writeTrace('Agent', 'c1', referenceTrace('ctx one', 'trace answer one'));
  writeTrace('Agent', 'c2', referenceTrace('ctx two', 'trace answer two'));
  const cfg = csvAdapter.configSchema.parse({ type: 'csv', name: 'Agent', path: csv, traces: { dir } });
  validateCsvCopilot(cfg);
  const adapter = csvAdapter.create(cfg, { env: {} });
  const signal = new AbortController().signal;
  expect(await adapter.collect({ query: { id: '1', text: 'q one' }, signal })).toMatchObject({
    text: 'trace answer one',
    context: 'ctx one',
    conversationId: 'c1',
  });
  expect(await adapter.collect({ query: { id: '2', text: 'q two' }, signal })).toMatchObject({
    text: 'CSV answer',
    context: 'ctx two',
  });
  const three = await adapter.collect({ query: { id: '3', text: 'q three' }, signal });
  expect(three.text).toBe('only CSV');
  expect(three.context).toBeUndefined();
  expect(JSON.parse((await adapter.collect({ query: { id: '1', text: 'q one' }, signal })).raw!).trace).toMatch(
    /Agent\/traces\/c1\.json$/,
  );
  // Missing folder: refused when the config is loaded.
  expect(() =>
    validateCsvCopilot({ ...cfg, traces: { dir: join(dir, 'nope'), spanName: REFERENCE_SPAN_NAME } }),
  ).toThrow(/traces\.dir .*nope does not exist/);
  // Neither the CSV nor a trace has an answer: missing, never an empty answer.
  writeFileSync(
    csv,
    toCsv([
      ['query', 'Agent_response', 'Agent_chat_id'],
      ['q four', '', 'c4'],
    ]),
  );
  expect(await adapterFailure(adapter.collect({ query: { id: '4', text: 'q four' }, signal }))).toMatchObject({
    kind: 'missing',
    message: expect.stringMatching(/no Agent_response value and its trace no answer/),
  });
});

testWithRealCabDataset(
  'the published CryptoAnalystBench queries with traces in the reference layout: each row’s context read from its own trace',
  async () => {
    const rows = cabDatasetRows().slice(0, 20);
    const csv = join(dir, 'answers.csv');
    writeFileSync(
      csv,
      toCsv([['query', 'tags', 'Sentient_chat_id'], ...rows.map((r, k) => [r.query, r.tags, `chat-${k}`])]),
    );
    rows.forEach((r, k) =>
      writeTrace('Sentient', `chat-${k}`, referenceTrace(`tool output for: ${r.query}`, `answer ${k}`)),
    );
    const cfg = csvAdapter.configSchema.parse({ type: 'csv', name: 'Sentient', path: csv, traces: { dir } });
    validateCsvCopilot(cfg);
    const adapter = csvAdapter.create(cfg, { env: {} });
    for (const [k, r] of rows.entries()) {
      const got = await adapter.collect({
        query: { id: `q${k}`, text: r.query },
        signal: new AbortController().signal,
      });
      expect(got).toMatchObject({ text: `answer ${k}`, context: `tool output for: ${r.query}` });
    }
  },
);
