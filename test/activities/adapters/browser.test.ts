import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserAdapter, closeSharedBrowser } from '../../../activities/adapters/browser';
import { artefactSaver } from '../../../activities/artefacts';
import type { ResultsStore } from '../../../core/model/store';
import { SqliteStore } from '../../../stores/sqlite';
import { aRun } from '../../stores/contract';
import { runCli } from '../../support/cli';
import type { Query } from '../../../core/model/types';
import { adapterFailure } from '../../support/adapterError';

jest.setTimeout(30_000);

/** What the page will stream for a question, recorded when the page asks for it, so assertions use the page's own plan. */
const planned = new Map<string, string>();

function planFor(question: string): string[] {
  const words =
    `You asked: ${question.trim()} — BTC dominance is 57.3%, ETH/BTC sits near 0.036; watch <funding> & "open interest" before sizing up.`.split(
      ' ',
    );
  planned.set(question, words.join(' '));
  return words;
}

const CHAT_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Test copilot</title>
<style>.spinner{color:#888} .answer{border:1px solid #ccc;margin:4px;padding:4px} #stop[hidden]{display:none}</style></head>
<body>
<button id="new-chat">New chat</button>
<div id="messages"><div class="answer">Welcome back! This earlier answer stays on the page.</div><ol class="sources"><li><a href="https://old.example/">An earlier answer's source</a></li></ol></div>
<textarea id="prompt"></textarea>
<button id="send">Send</button>
<button id="stop" hidden>Stop generating</button>
<script>
const params = new URLSearchParams(location.search);
const spinnerMs = Number(params.get('spinnerMs') || 300);
const spinnerInside = params.has('spinnerInside');
const forever = params.has('forever');
const stopStays = params.has('stopStays');
const spinnerClass = params.get('spinnerClass') || 'spinner';
const messages = document.getElementById('messages');
const input = document.getElementById('prompt');
const stop = document.getElementById('stop');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function newAnswer() { const div = document.createElement('div'); div.className = 'answer'; messages.appendChild(div); return div; }
document.getElementById('new-chat').onclick = () => { messages.innerHTML = ''; };
async function send() {
  const question = input.value; input.value = '';
  const mine = document.createElement('div'); mine.className = 'user'; mine.textContent = question; messages.appendChild(mine);
  if (!location.pathname.startsWith('/c/')) history.pushState(null, '', '/c/conv-' + Date.now());
  stop.hidden = false;
  const spinner = document.createElement('span'); spinner.className = spinnerClass; spinner.textContent = 'Thinking…';
  let answer;
  if (spinnerInside) { answer = newAnswer(); answer.appendChild(spinner); } else messages.appendChild(spinner);
  const { words } = await (await fetch('/api/plan?q=' + encodeURIComponent(question))).json();
  await sleep(spinnerMs);
  spinner.remove();
  answer = answer || newAnswer();
  for (let i = 0; forever || i < words.length; i++) {
    const word = (i ? ' ' : '') + (words[i % words.length]);
    if (i % 5 === 4) { const strong = document.createElement('strong'); strong.textContent = word; answer.appendChild(strong); }
    else answer.appendChild(document.createTextNode(word));
    await sleep(50);
  }
  if (params.has('sources')) {
    const list = document.createElement('ol'); list.className = 'sources';
    list.innerHTML = '<li><a href="https://data.example/aave">Aave dashboard</a></li><li><a href="https://data.example/lido">Lido &amp; stETH</a></li>';
    messages.appendChild(list);
  }
  if (!stopStays) stop.hidden = true;
  const footer = document.createElement('div'); footer.className = 'answer-done'; footer.textContent = 'Copy · Retry'; messages.appendChild(footer);
}
document.getElementById('send').onclick = send;
input.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); } });
</script></body></html>`;

const LOGIN_PAGE = '<!doctype html><html><body><h1>Please log in</h1></body></html>';

let server: Server;
let base: string;
let artefactDir: string;
/** The results store the adapter keeps its failure screenshots in (as a run's collect activity gives it). */
let store: ResultsStore;
let storeFile: string;
const RUN = 'run-browser';

beforeAll(async () => {
  artefactDir = mkdtempSync(join(tmpdir(), 'judgeflow-browser-'));
  storeFile = join(artefactDir, 'results.db');
  store = new SqliteStore(storeFile);
  await store.createRun(aRun(RUN));
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/api/plan') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ words: planFor(url.searchParams.get('q') ?? '') }));
    }
    if (url.pathname === '/secure' && !/(^|; )session=letmein/.test(req.headers.cookie ?? '')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(LOGIN_PAGE);
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(CHAT_PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeSharedBrowser();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await store.close();
  rmSync(artefactDir, { recursive: true, force: true });
});

function ask(fields: Record<string, unknown>, query: Query) {
  const config = browserAdapter.configSchema.parse({
    name: 'WebBot',
    type: 'browser',
    url: `${base}/`,
    selectors: { input: '#prompt', send: '#send', answer: '.answer' },
    timeoutMs: 15_000,
    ...fields,
  });
  const adapter = browserAdapter.create(config, { env: {}, saveArtefact: artefactSaver(store, RUN) });
  return adapter.collect({ query, signal: AbortSignal.timeout(config.timeoutMs) });
}

test('default done (quiet for 1500 ms): captures exactly the streamed answer, not the earlier one', async () => {
  const question = 'Which altcoins are outperforming Bitcoin today?';
  const response = await ask({}, { id: 'q1', text: question });
  expect(response.text).toBe(planned.get(question));
  expect(response.html).toContain('<strong>');
  expect(response.html).toContain('&lt;funding&gt;');
  expect(response.conversationId).toMatch(new RegExp(`^${base}/c/conv-\\d+$`));
});

test('selectors.sources: the source list that came with the new answer (not an earlier one), numbered as cited', async () => {
  const response = await ask(
    {
      url: `${base}/?sources=1`,
      selectors: { input: '#prompt', send: '#send', answer: '.answer', sources: '.sources li' },
    },
    { id: 'q-src', text: 'How big is Aave?' },
  );
  expect(response.sources).toEqual([
    { id: '1', url: 'https://data.example/aave', title: 'Aave dashboard' },
    { id: '2', url: 'https://data.example/lido', title: 'Lido & stETH' },
  ]);
  expect((await ask({}, { id: 'q-none', text: 'Anything?' })).sources).toBeUndefined();
});

test('done: {selector}, Enter instead of a send button, "new chat" step, and a logged-in storageState', async () => {
  const storageState = join(artefactDir, 'state.json');
  writeFileSync(
    storageState,
    JSON.stringify({
      cookies: [
        {
          name: 'session',
          value: 'letmein',
          domain: '127.0.0.1',
          path: '/',
          expires: -1,
          httpOnly: false,
          secure: false,
          sameSite: 'Lax',
        },
      ],
      origins: [],
    }),
  );
  const question = 'Compare HYPE with other DEX Projects.';
  const response = await ask(
    {
      // The stop button stays visible after the answer: the page never looks idle, so no quiet period can end
      // the wait; only the done selector appearing can.
      url: `${base}/secure?stopStays=1`,
      storageState,
      selectors: { input: '#prompt', answer: '.answer', stop: '#stop' },
      before: [{ click: '#new-chat' }, { wait: 50 }, { waitFor: '#prompt' }],
      done: { selector: '.answer-done' },
    },
    { id: 'q2', text: question },
  );
  expect(response.text).toBe(planned.get(question));
});

test('done: {stopGone}, two queries at once in separate contexts of the shared browser', async () => {
  const questions = ['Top projects on sui', 'What are the top trending DeFi pools tokens now?'];
  const responses = await Promise.all(
    questions.map((text, k) => ask({ done: { stopGone: '#stop' } }, { id: `q3-${k}`, text })),
  );
  expect(responses.map((r) => r.text)).toEqual(questions.map((q) => planned.get(q)));
});

test('a "Thinking…" placeholder inside the new answer bubble is not taken for the answer', async () => {
  const spinnerPage = (spinnerClass: string) => `${base}/?spinnerInside=1&spinnerMs=1000&spinnerClass=${spinnerClass}`;
  const questions = ['Compare xrp and hbar Future', 'Top projects on sui, again'];
  const [known, custom] = await Promise.all([
    // A class the adapter recognises as a loading placeholder.
    ask({ url: spinnerPage('spinner'), done: { quietMs: 400 } }, { id: 'q4a', text: questions[0] }),
    // An unrecognisable one, declared through selectors.stop.
    ask(
      {
        url: spinnerPage('dots'),
        selectors: { input: '#prompt', send: '#send', answer: '.answer', stop: '.dots' },
        done: { quietMs: 400 },
      },
      { id: 'q4b', text: questions[1] },
    ),
  ]);
  expect(known.text).toBe(planned.get(questions[0]));
  expect(custom.text).toBe(planned.get(questions[1]));
});

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

test('a page that never finishes: timeout error with a screenshot in the store, readable by another process', async () => {
  const error = await adapterFailure(
    ask({ url: `${base}/?forever=1`, timeoutMs: 3000 }, { id: 'q5/forever', text: 'Never stop' }),
  );
  expect(error.kind).toBe('timeout');
  expect(error.retryable).toBe(true);
  expect(error.message).toMatch(
    /did not finish within 3000 ms while waiting for the answer to finish \(answer had \d+ characters so far\)/,
  );
  const ref = error.options.screenshot!;
  expect(ref).toMatch(/^artefact:[0-9a-f]{16}$/);
  expect(error.message).toContain(`(screenshot: ${ref})`);
  // Another handle on the store (as a worker on another machine holds one) reads the screenshot itself.
  const other = new SqliteStore(storeFile);
  try {
    const shot = (await other.getArtefact(ref.slice('artefact:'.length)))!;
    expect(shot).toMatchObject({ runId: RUN, contentType: 'image/png' });
    expect(shot.name).toMatch(/^WebBot-q5_forever-.*\.png$/);
    expect(shot.bytes.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
  } finally {
    await other.close();
  }
  // And another process writes it out as a file: what `judgeflow artefacts RUN --out DIR` is for.
  const out = join(artefactDir, 'exported');
  const exported = await runCli(['artefacts', RUN, '--out', out, '--json'], { JUDGEFLOW_STORE: storeFile });
  expect(exported.stderr).toBe('');
  const files = JSON.parse(exported.stdout) as Array<{ ref: string; file: string }>;
  const file = files.find((f) => f.ref === ref)!.file;
  expect(file.startsWith(out)).toBe(true);
  expect(readFileSync(file).subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
});

test('a missing input selector fails fast naming it, with a screenshot', async () => {
  // timeoutMs (9 s) is below the default selector wait (10 s): had selectorTimeoutMs not bounded the wait for
  // the input, the copilot's timeout would have fired first and this would be a 'timeout' error.
  const error = await adapterFailure(
    ask(
      { selectors: { input: '#nope', answer: '.answer' }, selectorTimeoutMs: 1000, timeoutMs: 9000 },
      { id: 'q6', text: 'hello' },
    ),
  );
  expect(error.kind).toBe('selector');
  expect(error.message).toContain(`input selector "#nope" matched nothing on ${base}/`);
  const shot = await store.getArtefact(error.options.screenshot!.slice('artefact:'.length));
  expect(shot?.name).toMatch(/^WebBot-q6-.*\.png$/);
});

test('without the storageState the login page has no input: selector error', async () => {
  const error = await adapterFailure(
    ask({ url: `${base}/secure`, selectorTimeoutMs: 500 }, { id: 'q7', text: 'hello' }),
  );
  expect(error.kind).toBe('selector');
  expect(error.message).toContain('input selector "#prompt" matched nothing');
});
