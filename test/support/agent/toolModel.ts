import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small tool-calling model for the agent adapter's tests, over HTTP in both wire formats: OpenAI Chat Completions
 * (`tools` / `tool_calls` / role `tool`) at /v1/chat/completions and Anthropic Messages (`tools` / `tool_use` /
 * `tool_result`) at /v1/messages. Deterministic from the request alone: the first turn calls `get_price` once per
 * ticker (upper-case word of 3-4 letters) in the question, all in one turn; once results are there it answers quoting
 * each result. `delayMs` holds every reply (to kill a worker mid-trajectory); every request is kept in `requests`.
 */
export interface ToolModel {
  url: string;
  requests: Array<{ path: string; body: any; headers: http.IncomingHttpHeaders }>;
  delayMs: number;
  close(): Promise<void>;
}

const tickers = (text: string) => [...new Set(text.match(/\b[A-Z]{3,4}\b/g) ?? [])];

export async function startToolModel(): Promise<ToolModel> {
  const model: ToolModel = { url: '', requests: [], delayMs: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      // Only the two chat endpoints (a GET /models probe, as judgeflow's simulator check sends, is not one).
      if (req.method !== 'POST') return void res.writeHead(404).end();
      const body = JSON.parse(data || '{}');
      model.requests.push({ path: req.url ?? '', body, headers: req.headers });
      const reply = req.url?.endsWith('/messages') ? anthropicReply(body) : openaiReply(body);
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply));
      }, model.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  model.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return model;
}

/** One sentence per result: a price with its source as the tool gave them, a failure named; "-hallucinating" models add a figure no tool returned. */
export const HALLUCINATED = 'Trading volume rose 37.5% week on week.';
function answerFrom(results: string[], model: string): string {
  const lines = results.map((text) => {
    try {
      const r = JSON.parse(text);
      if (r && typeof r.price === 'number') return `${r.symbol} trades at ${r.price} USD (source: ${r.source}).`;
    } catch {
      // not JSON: an error result
    }
    return `A lookup failed: ${text}.`;
  });
  if (/hallucinating/.test(model)) lines.push(HALLUCINATED);
  return lines.length ? lines.join('\n') : 'No figures were looked up.';
}

function openaiReply(body: any) {
  const messages: any[] = body.messages;
  const question = [...messages].reverse().find((m) => m.role === 'user').content as string;
  const results = messages.filter((m) => m.role === 'tool').map((m) => m.content as string);
  const lastToolTurn = messages.map((m: any) => m.role === 'assistant' && Boolean(m.tool_calls)).lastIndexOf(true);
  const usage = { prompt_tokens: 100 + messages.length, completion_tokens: 20 };
  const canCall = body.tools?.length && body.tool_choice !== 'none';
  if (lastToolTurn < 0 && canCall && tickers(question).length) {
    const calls = tickers(question).map((symbol, i) => ({
      id: `call_${i}_${symbol}`,
      type: 'function',
      function: { name: 'get_price', arguments: JSON.stringify({ symbol }) },
    }));
    return {
      id: 'cmpl-1',
      choices: [
        { index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: calls } },
      ],
      usage,
    };
  }
  return {
    id: 'cmpl-2',
    choices: [
      { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: answerFrom(results, body.model) } },
    ],
    usage,
  };
}

function anthropicReply(body: any) {
  const messages: any[] = body.messages;
  const question =
    messages[messages.length - 1].role === 'user' && typeof messages[messages.length - 1].content === 'string'
      ? messages[messages.length - 1].content
      : messages.find((m) => typeof m.content === 'string' && m.role === 'user').content;
  const results = messages.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content.filter((b: any) => b.type === 'tool_result').map((b: any) => b.content as string)
      : [],
  );
  const called = messages.some(
    (m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_use'),
  );
  const usage = { input_tokens: 100 + messages.length, output_tokens: 20 };
  const canCall = body.tools?.length && body.tool_choice?.type !== 'none';
  if (!called && canCall && tickers(question).length) {
    const content = tickers(question).map((symbol, i) => ({
      type: 'tool_use',
      id: `toolu_${i}_${symbol}`,
      name: 'get_price',
      input: { symbol },
    }));
    return { id: 'msg_1', type: 'message', role: 'assistant', content, stop_reason: 'tool_use', usage };
  }
  return {
    id: 'msg_2',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: answerFrom(results, body.model) }],
    stop_reason: 'end_turn',
    usage,
  };
}
