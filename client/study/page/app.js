// The annotation page. No framework; all text from the server goes in with textContent, except the two responses and
// earlier turns, which the server has already rendered from Markdown with every source character escaped.
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem('judgeflow-token', fromHash);
    history.replaceState(null, '', location.pathname); // keep the token out of the address bar and history
  }
  const token = sessionStorage.getItem('judgeflow-token');
  let me = null;
  let current = null;

  async function call(method, path, body) {
    const res = await fetch(path, {
      method,
      headers: { authorization: 'Bearer ' + token, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || 'HTTP ' + res.status);
    return data;
  }

  function setProgress(p) {
    $('progress').textContent = p.done + ' of ' + p.total + ' done';
  }

  function radio(name, value, text, key, description) {
    const label = document.createElement('label');
    const input = document.createElement('input');
    Object.assign(input, { type: 'radio', name, value });
    label.append(input, ' ' + text + ' ');
    if (key) {
      const k = document.createElement('kbd');
      k.textContent = key;
      label.append(k);
    }
    if (description) {
      const d = document.createElement('div');
      d.className = 'desc';
      d.textContent = description;
      label.append(d);
    }
    return label;
  }

  function buildForm(options) {
    for (const c of options.choices) $('choices').append(radio('choice', c.id, c.label, c.key));
    for (const r of options.reasons) $('reasons').append(radio('reason', r.id, r.label, r.key, r.description));
    for (const t of options.errorTypes) $('errorTypes').append(radio('errorType', t.id, t.label));
    $('reasonKeys').textContent = options.reasons
      .map((r) => r.key)
      .filter(Boolean)
      .join('/');
  }

  const checked = (name) => document.querySelector('input[name="' + name + '"]:checked');
  function pick(name, value) {
    const input = document.querySelector('input[name="' + name + '"][value="' + CSS.escape(value) + '"]');
    if (input) input.checked = true;
    syncForm();
  }

  function syncForm() {
    const choice = checked('choice');
    const tie = choice && choice.value === 'tie';
    $('serious').disabled = Boolean(tie);
    if (tie) $('serious').checked = false;
    for (const input of document.querySelectorAll('input[name="errorType"]')) {
      input.disabled = !$('serious').checked;
      if (input.disabled) input.checked = false;
    }
  }

  function show(view) {
    current = view;
    $('formError').textContent = '';
    if (!view) {
      $('task').hidden = true;
      $('message').textContent =
        'All ' + me.progress.total + ' done — thank you! Use your link again any time to review your answers.';
      if (me.progress.total) (($('task').hidden = false), showDoneNav());
      return;
    }
    $('message').textContent = '';
    $('task').hidden = false;
    for (const el of ['history', 'query', 'responseA', 'responseB']) $(el).textContent = '';
    for (const turn of view.query.history) {
      const div = document.createElement('div');
      div.className = 'turn';
      const role = document.createElement('div');
      role.className = 'role';
      role.textContent = 'Earlier ' + turn.role + ' turn';
      const body = document.createElement('div');
      body.innerHTML = turn.html; // server-rendered, escaped Markdown
      div.append(role, body);
      $('history').append(div);
    }
    $('query').textContent = view.query.text;
    $('responseA').innerHTML = view.responseA.html; // server-rendered, escaped Markdown
    $('responseB').innerHTML = view.responseB.html;
    $('position').textContent =
      'Item ' + view.position + ' of ' + view.total + (view.answer ? ' (answered — submitting again updates it)' : '');
    $('answer').reset();
    if (view.answer) {
      pick('choice', view.answer.choice);
      if (view.answer.reason) pick('reason', view.answer.reason);
      $('serious').checked = view.answer.seriousError;
      syncForm();
      if (view.answer.errorType) pick('errorType', view.answer.errorType);
      $('comment').value = view.answer.comment || '';
    }
    syncForm();
    for (const el of ['choices', 'reasons', 'errors', 'comment', 'submit']) $(el).hidden = false;
    window.scrollTo(0, 0);
  }

  function showDoneNav() {
    for (const el of ['history', 'query', 'responseA', 'responseB']) $(el).textContent = '';
    $('position').textContent = '';
    current = null;
  }

  async function refreshMe() {
    me = await call('GET', '/api/me');
    setProgress(me.progress);
  }

  async function loadNext() {
    const next = await call('GET', '/api/next');
    setProgress(next.progress);
    me.progress = next.progress;
    show(next.assignment);
  }

  async function go(delta) {
    await refreshMe();
    const ids = me.assignments.map((a) => a.id);
    const here = current ? ids.indexOf(current.id) : ids.length;
    const target = ids[here + delta];
    if (target) show(await call('GET', '/api/assignments/' + encodeURIComponent(target)));
    else if (delta > 0) await loadNext();
  }

  async function submit() {
    if (!current) return;
    const choice = checked('choice');
    const reason = checked('reason');
    const errorType = checked('errorType');
    const body = {
      choice: choice ? choice.value : undefined,
      reason: reason ? reason.value : null,
      seriousError: $('serious').checked,
      errorType: errorType ? errorType.value : null,
      comment: $('comment').value || null,
    };
    if (!body.choice) return formError('Choose A, B or tie first.', 'choices');
    if (body.choice !== 'tie' && !body.reason) return formError('Choose the main reason for the winner.', 'reasons');
    if (body.seriousError && !body.errorType) return formError('Choose the type of the serious error.', 'errors');
    $('submit').disabled = true;
    try {
      const saved = await call('POST', '/api/assignments/' + encodeURIComponent(current.id) + '/answer', body);
      setProgress(saved.progress);
      await refreshMe();
      await loadNext();
    } catch (e) {
      formError(e.message);
    } finally {
      $('submit').disabled = false;
    }
  }

  // A message the annotator must act on is brought into view (answers can be long: the form may be below the fold,
  // e.g. after Enter was pressed while reading), with the part of the form it is about.
  function formError(text, fieldset) {
    $('formError').textContent = text;
    const target = fieldset ? $(fieldset) : $('formError');
    target.scrollIntoView({ block: 'center' });
    const first = fieldset && target.querySelector('input');
    if (first) first.focus({ preventScroll: true });
  }

  document.addEventListener('keydown', (event) => {
    if (!me || event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target instanceof HTMLTextAreaElement;
    if (typing) {
      if (event.key === 'Escape') event.target.blur();
      return;
    }
    const key = event.key.toLowerCase();
    const choice = me.options.choices.find((c) => c.key === key);
    const reason = me.options.reasons.find((r) => r.key === key);
    if (key === 'enter') {
      event.preventDefault();
      void submit();
    } else if (choice) pick('choice', choice.id);
    else if (reason) pick('reason', reason.id);
    else if (key === 'e' && !$('serious').disabled) {
      $('serious').checked = !$('serious').checked;
      syncForm();
    } else if (key === 'p') void go(-1);
    else if (key === 'n') void go(1);
  });
  document.addEventListener('change', syncForm);
  $('answer').addEventListener('submit', (event) => {
    event.preventDefault();
    void submit();
  });
  $('prev').addEventListener('click', () => void go(-1));
  $('next').addEventListener('click', () => void go(1));

  (async () => {
    if (!token)
      return void ($('message').textContent = 'Open this page with your personal link (it ends in #token=…).');
    try {
      await refreshMe();
      buildForm(me.options);
      if (!me.open) $('message').textContent = 'This study is closed; thank you for your help.';
      await loadNext();
    } catch (e) {
      $('message').textContent = 'Could not start: ' + e.message;
    }
  })();
})();
