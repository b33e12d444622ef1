/**
 * A minimal chat web page served by the simulator at GET /chat, so a `browser` copilot can be tried against the
 * simulator like the other adapter types (the README's quick start). `?model=NAME` picks the simulated model the page
 * asks (default sim-copilot). The page posts each question to the simulator's own /v1/chat/completions and shows the
 * reply in a new `.answer` element, then adds `.answer-done` under it.
 */
export function chatPageHtml(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>judgeflow sim chat</title>
<style>body{font-family:sans-serif;max-width:48rem;margin:2rem auto} .user{font-weight:bold;margin-top:1rem} .answer{white-space:pre-wrap;border-left:3px solid #ccc;padding-left:.5rem}</style></head>
<body>
<h1>judgeflow sim chat</h1>
<div id="messages"></div>
<textarea id="prompt" rows="3" cols="60" aria-label="Question"></textarea>
<button id="send">Send</button>
<script>
const model = new URLSearchParams(location.search).get('model') || 'sim-copilot';
const messages = document.getElementById('messages');
const input = document.getElementById('prompt');
function add(className, text) { const div = document.createElement('div'); div.className = className; div.textContent = text; messages.appendChild(div); return div; }
async function send() {
  const question = input.value.trim();
  if (!question) return;
  input.value = '';
  add('user', question);
  let text;
  try {
    const reply = await fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: question }] }) });
    const body = await reply.json();
    text = reply.ok ? body.choices[0].message.content : 'Error: ' + (body.error && body.error.message);
  } catch (error) {
    text = 'Error: ' + error;
  }
  add('answer', text);
  add('answer-done', 'done');
}
document.getElementById('send').onclick = send;
input.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); } });
</script></body></html>`;
}
