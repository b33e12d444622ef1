/*
 * The page script of every judgeflow HTML page (reports and `judgeflow view`). Plain browser JavaScript, inlined.
 *
 * Untrusted text (queries, copilot answers, rationales) only ever reaches the page through textContent and
 * createElement: never innerHTML, never an attribute that can run code. Markdown is parsed here into DOM
 * nodes; raw HTML in an answer shows as text, images become their alt text, links keep http(s)/mailto only.
 */
(function () {
  'use strict';
  var dataEl = document.getElementById('report-data');
  var data = dataEl ? JSON.parse(dataEl.textContent || 'null') : null;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) node.setAttribute(k, attrs[k]);
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return node;
  }
  function fmt(x, d) {
    return x === null || x === undefined || !isFinite(x) ? '–' : Number(x).toFixed(d === undefined ? 1 : d);
  }

  // ---- safe Markdown -------------------------------------------------------------------------
  var SAFE_URL = /^(https?:|mailto:)/i;
  function inline(text, parent) {
    // Tokens: `code`, **bold**, *em* / _em_, ![alt](url), [text](url). Everything else is text.
    // Link targets may hold one level of parentheses (wiki URLs, and `javascript:alert(1)`, which must be caught whole).
    var re =
      /(`[^`]+`)|(\*\*[^*]+\*\*)|(__[^_]+__)|(\*[^*\s][^*]*\*)|(!\[[^\]]*\]\((?:[^()\s]|\([^()\s]*\))*\))|(\[[^\]]+\]\((?:[^()\s]|\([^()\s]*\))*\))/g;
    var last = 0;
    var m;
    while ((m = re.exec(text))) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      var t = m[0];
      if (m[1]) parent.appendChild(el('code', null, [t.slice(1, -1)]));
      else if (m[2] || m[3]) inline(t.slice(2, -2), parent.appendChild(el('strong')));
      else if (m[4]) inline(t.slice(1, -1), parent.appendChild(el('em')));
      else if (m[5]) {
        // Images are never loaded (no remote requests): their alt text stands in.
        var alt = /^!\[([^\]]*)\]/.exec(t)[1];
        parent.appendChild(el('span', { class: 'muted' }, ['[image' + (alt ? ': ' + alt : '') + ']']));
      } else {
        var parts = /^\[([^\]]+)\]\((.*)\)$/.exec(t);
        var url = parts[2].trim();
        if (SAFE_URL.test(url)) {
          var a = el('a', { href: url, rel: 'noopener noreferrer nofollow', target: '_blank' });
          inline(parts[1], a);
          parent.appendChild(a);
        } else {
          // javascript:, data:, relative and anything else: the link text only.
          inline(parts[1], parent);
        }
      }
      last = m.index + t.length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
    return parent;
  }

  function markdown(src) {
    var root = el('div', { class: 'md' });
    var lines = String(src || '')
      .replace(/\r\n?/g, '\n')
      .split('\n');
    var i = 0;
    var list = null;
    var para = [];
    function flush() {
      if (para.length) root.appendChild(inline(para.join(' '), el('p')));
      para = [];
    }
    while (i < lines.length) {
      var line = lines[i];
      var fence = /^\s*```/.test(line);
      if (fence) {
        flush();
        list = null;
        var code = [];
        i++;
        while (i < lines.length && !/^\s*```/.test(lines[i])) code.push(lines[i++]);
        i++;
        root.appendChild(el('pre', null, [el('code', null, [code.join('\n')])]));
        continue;
      }
      var h = /^(#{1,6})\s+(.*)$/.exec(line);
      var ul = /^\s*[-*+]\s+(.*)$/.exec(line);
      var ol = /^\s*\d+[.)]\s+(.*)$/.exec(line);
      if (h) {
        flush();
        list = null;
        root.appendChild(inline(h[2], el('h' + Math.min(6, h[1].length + 3))));
      } else if (ul || ol) {
        flush();
        var tag = ul ? 'ul' : 'ol';
        // An ordered list keeps the number it starts at (one interrupted by a paragraph resumes at its own number).
        var start = ol ? parseInt(/^\s*(\d+)/.exec(line)[1], 10) : 1;
        if (!list || list.tagName.toLowerCase() !== tag)
          list = root.appendChild(el(tag, start !== 1 ? { start: String(start) } : null));
        list.appendChild(inline((ul || ol)[1], el('li')));
      } else if (!line.trim()) {
        flush();
        // A blank line between items ("1. a", "", "2. b", as LLMs often write) keeps one list, so its numbering holds.
        var next = lines.slice(i + 1).find(function (l) {
          return l.trim();
        });
        if (!list || !next || !(list.tagName.toLowerCase() === 'ol' ? /^\s*\d+[.)]\s+/ : /^\s*[-*+]\s+/).test(next))
          list = null;
      } else {
        list = null;
        para.push(line.trim());
      }
      i++;
    }
    flush();
    return root;
  }

  // ---- drill-down ------------------------------------------------------------------------------
  function drillDown(host, drill) {
    var dims = drill.dimensions || [];
    var copilots = drill.copilots || [];
    var search = el('input', {
      type: 'search',
      id: 'drill-search',
      placeholder: 'words in the query or answer',
      'aria-controls': 'drill-table',
    });
    var copilotSel = el(
      'select',
      { id: 'drill-copilot' },
      [el('option', { value: '' }, ['all'])].concat(
        copilots.map(function (c) {
          return el('option', { value: c }, [c]);
        }),
      ),
    );
    var labelSel = el(
      'select',
      { id: 'drill-label' },
      [el('option', { value: '' }, ['all'])].concat(
        (drill.labels || []).map(function (l) {
          return el('option', { value: l }, [l]);
        }),
      ),
    );
    var statusSel = el(
      'select',
      { id: 'drill-status' },
      ['', 'ok', 'failed'].map(function (s) {
        return el('option', { value: s }, [s || 'all']);
      }),
    );
    var count = el('span', { class: 'muted', role: 'status', 'aria-live': 'polite' });
    host.appendChild(
      el('div', { class: 'controls' }, [
        el('label', null, ['Search', search]),
        el('label', null, ['Copilot', copilotSel]),
        el('label', null, [drill.labelName || 'Label', labelSel]),
        el('label', null, ['Status', statusSel]),
        count,
      ]),
    );
    var head = el(
      'tr',
      null,
      [
        el('th', { scope: 'col' }, ['query']),
        el('th', { scope: 'col' }, [drill.labelName || 'label']),
        el('th', { scope: 'col' }, ['copilot']),
      ]
        .concat(drill.hasRank ? [el('th', { scope: 'col' }, ['rank'])] : [])
        .concat(
          dims.map(function (d) {
            return el('th', { scope: 'col', title: d.name }, [d.id]);
          }),
        )
        .concat([el('th', { scope: 'col' }, ['total']), el('th', { scope: 'col' }, ['status'])]),
    );
    var tbody = el('tbody');
    var table = el('table', { id: 'drill-table' }, [
      el('caption', null, [
        "Every query × copilot; select a row (Enter) to see the query, the answer and the judge's rationales",
      ]),
      el('thead', null, [head]),
      tbody,
    ]);
    // The opened answer sits above the table, so it is seen (and focused) without scrolling past every row.
    var detail = el('div', { id: 'drill-detail', class: 'detail', tabindex: '-1', hidden: '', 'aria-live': 'polite' });
    host.appendChild(detail);
    host.appendChild(el('div', { class: 'table-wrap' }, [table]));
    var LIMIT = 300;

    function status(r) {
      return r.rs !== 'ok' ? 'failed' : r.js === 'ok' ? 'ok' : 'failed';
    }
    function render() {
      var q = search.value.trim().toLowerCase();
      var shown = 0;
      var matched = 0;
      tbody.textContent = '';
      drill.rows.forEach(function (r, idx) {
        var query = drill.queries[r.q] || { text: '' };
        if (copilotSel.value && r.c !== copilotSel.value) return;
        if (labelSel.value && (query.labels || []).indexOf(labelSel.value) < 0) return;
        if (statusSel.value && status(r) !== statusSel.value) return;
        if (q && (r.q + ' ' + query.text + ' ' + (r.text || '')).toLowerCase().indexOf(q) < 0) return;
        matched++;
        if (shown >= LIMIT) return;
        shown++;
        var tr = el(
          'tr',
          { tabindex: '0', 'data-row': String(idx), 'aria-label': 'Open ' + r.q + ' / ' + r.c },
          [
            el('td', { class: 'text', title: query.text }, [r.q + ' · ' + query.text]),
            el('td', null, [(query.labels || []).join(', ')]),
            el('td', null, [r.c]),
          ]
            .concat(
              drill.hasRank
                ? [el('td', { class: 'num' }, [r.rank === null || r.rank === undefined ? '–' : String(r.rank)])]
                : [],
            )
            .concat(
              dims.map(function (d) {
                return el('td', { class: 'num' }, [r.scores && d.id in r.scores ? String(r.scores[d.id]) : '–']);
              }),
            )
            .concat([el('td', { class: 'num' }, [fmt(r.total, 1)]), el('td', null, [status(r)])]),
        );
        tr.addEventListener('click', function () {
          open(idx);
        });
        tr.addEventListener('keydown', function (e) {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            open(idx);
          }
        });
        tbody.appendChild(tr);
      });
      count.textContent =
        matched +
        ' of ' +
        drill.rows.length +
        ' shown' +
        (matched > shown ? ' (first ' + shown + '; narrow the search)' : '');
    }
    function open(idx) {
      var r = drill.rows[idx];
      var query = drill.queries[r.q] || { text: '' };
      detail.textContent = '';
      detail.hidden = false;
      var close = el('button', { type: 'button' }, ['Close']);
      close.addEventListener('click', function () {
        detail.hidden = true;
        var row = tbody.querySelector('tr[data-row="' + idx + '"]');
        if (row) row.focus();
      });
      detail.appendChild(el('h3', null, [r.q + ' — ' + r.c]));
      detail.appendChild(
        el('p', { class: 'muted' }, [
          (query.labels || []).join(', ') +
            (r.position ? ' · shown at position ' + r.position : '') +
            (r.rank ? ' · ranked ' + r.rank : '') +
            ' · total ' +
            fmt(r.total, 1),
        ]),
      );
      detail.appendChild(el('h4', null, ['Query']));
      (query.history || []).forEach(function (t) {
        detail.appendChild(el('p', { class: 'muted' }, [t.role + ': ' + t.content]));
      });
      detail.appendChild(el('p', { class: 'query-text' }, [query.text]));
      detail.appendChild(el('h4', null, ['Response']));
      if (r.text !== null && r.text !== undefined)
        detail.appendChild(el('div', { class: 'answer' }, [markdown(r.text)]));
      else detail.appendChild(el('p', { class: 'muted' }, ['No response (' + r.rs + ')']));
      if (r.error) detail.appendChild(el('p', { class: 'muted' }, ['Failure: ' + r.error]));
      if (r.ctx)
        detail.appendChild(
          el('details', { class: 'context' }, [
            el('summary', null, ['Context the copilot had']),
            el('pre', { class: 'context-text' }, [r.ctx]),
          ]),
        );
      if (r.st && r.st.length) {
        // An agent copilot's trajectory: each model turn and tool call, with a bounded view of what the tool returned.
        detail.appendChild(el('h4', null, ['Steps (' + r.st.length + ')']));
        detail.appendChild(
          el('table', { class: 'agent-steps' }, [
            el('thead', null, [
              el(
                'tr',
                null,
                ['step', 'tool', 'arguments', 'result', 'ms', 'tokens'].map(function (h) {
                  return el('th', { scope: 'col' }, [h]);
                }),
              ),
            ]),
            el(
              'tbody',
              null,
              r.st.map(function (s, i) {
                var what =
                  s.k === 'model'
                    ? 'model turn'
                    : s.e
                      ? 'tool call (error)'
                      : s.w
                        ? 'tool call (from the world)'
                        : 'tool call';
                return el('tr', { class: 'step-' + s.k + (s.e ? ' step-error' : '') }, [
                  el('th', { scope: 'row' }, [i + 1 + ' · ' + what]),
                  el('td', null, [s.t || '']),
                  el('td', null, [el('code', null, [s.a || ''])]),
                  el('td', null, [el('pre', { class: 'step-result' }, [s.k === 'model' ? s.x || '' : s.r || ''])]),
                  el('td', { class: 'num' }, [String(s.ms)]),
                  el('td', { class: 'num' }, [s.tok === undefined ? '–' : String(s.tok)]),
                ]);
              }),
            ),
          ]),
        );
      }
      var rationales = r.rationales || {};
      var keys = dims
        .map(function (d) {
          return d.id;
        })
        .filter(function (k) {
          return k in rationales || (r.scores && k in r.scores);
        });
      Object.keys(rationales).forEach(function (k) {
        if (keys.indexOf(k) < 0) keys.push(k);
      });
      if (keys.length) {
        detail.appendChild(el('h4', null, ["Judge's rationales"]));
        var names = {};
        dims.forEach(function (d) {
          names[d.id] = d.name && d.name !== d.id ? d.id + ' ' + d.name : d.id;
        });
        detail.appendChild(
          el('table', { class: 'rationales' }, [
            el('thead', null, [
              el('tr', null, [
                el('th', { scope: 'col' }, ['dimension']),
                el('th', { scope: 'col' }, ['score']),
                el('th', { scope: 'col' }, ['rationale']),
              ]),
            ]),
            el(
              'tbody',
              null,
              keys.map(function (k) {
                return el('tr', null, [
                  el('th', { scope: 'row' }, [names[k] || k]),
                  el('td', null, [r.scores && k in r.scores ? String(r.scores[k]) : '–']),
                  el('td', { class: 'rationale' }, [rationales[k] || '']),
                ]);
              }),
            ),
          ]),
        );
      }
      var every = el('button', { type: 'button', class: 'every-copilot' }, [
        "Every copilot's answer to " + r.q + ', side by side',
      ]);
      every.addEventListener('click', function () {
        openQuery(r.q, idx);
      });
      detail.appendChild(el('p', null, [every, ' ', close]));
      detail.focus();
    }
    // One query, every copilot's answer in its own column: what a reader compares when scores disagree.
    function openQuery(qid, fromIdx) {
      var query = drill.queries[qid] || { text: '' };
      detail.textContent = '';
      detail.hidden = false;
      detail.appendChild(el('h3', null, [qid + ' — every copilot']));
      if ((query.labels || []).length) detail.appendChild(el('p', { class: 'muted' }, [query.labels.join(', ')]));
      (query.history || []).forEach(function (t) {
        detail.appendChild(el('p', { class: 'muted' }, [t.role + ': ' + t.content]));
      });
      detail.appendChild(el('p', { class: 'query-text' }, [query.text]));
      var columns = el('div', { class: 'side-by-side', id: 'side-by-side' });
      drill.rows.forEach(function (r, idx) {
        if (r.q !== qid) return;
        var col = el('div', { class: 'side', 'data-copilot': r.c }, [
          el('h4', null, [r.c]),
          el('p', { class: 'muted' }, [
            'total ' + fmt(r.total, 1) + (drill.hasRank && r.rank ? ' · ranked ' + r.rank : '') + ' · ' + status(r),
          ]),
        ]);
        if (r.text !== null && r.text !== undefined)
          col.appendChild(el('div', { class: 'answer' }, [markdown(r.text)]));
        else col.appendChild(el('p', { class: 'muted' }, ['No response (' + r.rs + ')']));
        var one = el('button', { type: 'button' }, ['Scores and rationales']);
        one.addEventListener('click', function () {
          open(idx);
        });
        col.appendChild(one);
        columns.appendChild(col);
      });
      detail.appendChild(columns);
      var close = el('button', { type: 'button' }, ['Close']);
      close.addEventListener('click', function () {
        detail.hidden = true;
        var row = tbody.querySelector('tr[data-row="' + fromIdx + '"]');
        if (row) row.focus();
      });
      detail.appendChild(el('p', null, [close]));
      detail.focus();
    }
    [search, copilotSel, labelSel, statusSel].forEach(function (c) {
      c.addEventListener('input', render);
    });
    render();
  }

  // Movers in a compare report: both answers' Markdown, rendered safely.
  function renderAnswers() {
    document.querySelectorAll('[data-markdown-index]').forEach(function (node) {
      var text = data && data.answers ? data.answers[Number(node.getAttribute('data-markdown-index'))] : null;
      if (text !== null && text !== undefined) node.appendChild(markdown(text));
    });
  }

  // ---- judgeflow view: live run list -----------------------------------------------------------
  function liveRuns(host) {
    var tbody = host.querySelector('tbody');
    function cell(text, cls) {
      return el('td', cls ? { class: cls } : null, [text]);
    }
    var picked = {};
    var last = '';
    host.addEventListener('change', function (e) {
      if (e.target && e.target.name === 'pick') picked[e.target.value] = e.target.checked;
    });
    function refresh() {
      fetch('/api/runs', { headers: { accept: 'application/json' } })
        .then(function (r) {
          return r.json();
        })
        .then(function (rows) {
          // Redraw only on change, keeping picks and keyboard focus (a list that moves under the cursor is unusable).
          var text = JSON.stringify(rows);
          if (text === last) return;
          last = text;
          var active = document.activeElement;
          var focusKey = active && host.contains(active) ? active.getAttribute('data-focus') || null : null;
          tbody.textContent = '';
          rows.forEach(function (r) {
            var pick = el('input', {
              type: 'checkbox',
              name: 'pick',
              value: r.runId,
              'aria-label': 'pick ' + r.runId + ' to compare',
              'data-focus': 'pick:' + r.runId,
            });
            pick.checked = Boolean(picked[r.runId]);
            var link = el('a', { href: '/runs/' + encodeURIComponent(r.runId), 'data-focus': 'link:' + r.runId }, [
              r.runId,
            ]);
            var progress = r.progress;
            var statusCell = el('td', { class: 'status-' + r.status, 'data-run-status': r.runId }, [r.status]);
            if (progress && r.status === 'running') {
              statusCell.appendChild(el('br'));
              statusCell.appendChild(
                el('span', { class: 'progress-text', 'data-progress': r.runId }, [
                  progress.stage +
                    ' ' +
                    progress.done +
                    '/' +
                    progress.total +
                    (progress.failures ? ', ' + progress.failures + ' failed' : ''),
                ]),
              );
              var bar = el('progress', {
                max: String(progress.total || 1),
                value: String(progress.done),
                'aria-label': 'progress of ' + r.runId,
              });
              statusCell.appendChild(el('br'));
              statusCell.appendChild(bar);
            }
            var scores = r.scores
              ? Object.keys(r.scores)
                  .map(function (k) {
                    return k + ' ' + fmt(r.scores[k], 1);
                  })
                  .join(', ')
              : r.error
                ? 'error: ' + r.error
                : '';
            var temporal = el('a', { href: r.temporalUrl, rel: 'noopener noreferrer', target: '_blank' }, ['Temporal']);
            tbody.appendChild(
              el('tr', { 'data-run': r.runId }, [
                el('td', null, [pick]),
                el('td', null, [link, r.sourceRunId ? ' (re-judge of ' + r.sourceRunId + ')' : '']),
                cell(r.protocol),
                cell(r.snapshotId),
                cell(r.rubricVersion),
                cell(r.judgeModel),
                statusCell,
                cell(r.startedAt.replace('T', ' ').slice(0, 19), 'num'),
                cell(scores),
                el('td', null, [temporal]),
              ]),
            );
          });
          if (focusKey) {
            var again = host.querySelector('[data-focus="' + focusKey.replace(/"/g, '\\"') + '"]');
            if (again) again.focus();
          }
        })
        .catch(function () {
          /* server gone; try again next tick */
        })
        .then(function () {
          setTimeout(refresh, Number(host.getAttribute('data-interval') || 1500));
        });
    }
    var form = document.getElementById('compare-form');
    if (form)
      form.addEventListener('submit', function (e) {
        e.preventDefault();
        var chosen = Array.prototype.map.call(host.querySelectorAll('input[name=pick]:checked'), function (i) {
          return i.value;
        });
        var msg = document.getElementById('compare-msg');
        if (chosen.length !== 2) {
          msg.textContent = 'Pick exactly two runs (older first is A).';
          return;
        }
        location.href = '/compare?a=' + encodeURIComponent(chosen[1]) + '&b=' + encodeURIComponent(chosen[0]);
      });
    refresh();
  }

  function liveRun(host) {
    function refresh() {
      fetch('/api/runs/' + encodeURIComponent(host.getAttribute('data-run')), {
        headers: { accept: 'application/json' },
      })
        .then(function (r) {
          return r.json();
        })
        .then(function (r) {
          if (r.status !== 'running') {
            location.reload();
            return;
          }
          var p = r.progress;
          host.querySelector('.progress-text').textContent = p
            ? p.stage + ' ' + p.done + '/' + p.total + (p.failures ? ', ' + p.failures + ' failed' : '')
            : 'waiting for a worker';
          var bar = host.querySelector('progress');
          if (p) {
            bar.max = p.total || 1;
            bar.value = p.done;
          }
          setTimeout(refresh, 1500);
        })
        .catch(function () {
          setTimeout(refresh, 3000);
        });
    }
    refresh();
  }

  var drillHost = document.getElementById('drill');
  if (drillHost && data && data.drill) drillDown(drillHost, data.drill);
  renderAnswers();
  var runsHost = document.getElementById('runs-live');
  if (runsHost) liveRuns(runsHost);
  var runHost = document.getElementById('run-live');
  if (runHost) liveRun(runHost);
})();
