// tributary console: one page, hash routes, the JSON API under /api/ (docs/console.md).
//
// Everything a source, a group or an event supplies (names, error texts,
// payloads) is untrusted: the DOM is built with createElement/textContent
// only, never by parsing HTML, and links are built with encodeURIComponent.
// The Content-Security-Policy forbids inline scripts and styles, so there are
// no style attributes and no inline handlers either.
'use strict';

(() => {
  const TOKEN_KEY = 'tributary.console.token';
  const REFRESH_MS = 5000;
  const TAIL_KEEP = 500;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const STATES = ['ok', 'transient', 'throttled', 'failing', 'paused', 'pushed', 'published'];
  const SORTABLE = {name: 'name', lag: 'lag', failures: 'errors', last_success_at: 'last_success'};

  // ---- state shared by the pages -------------------------------------------------------------

  const app = {
    session: null,            // /api/session
    view: null,               // the current page: {refresh(), stop()}
    sources: {pattern: '>', state: '', sort: 'name', order: 'asc', limit: 100, offset: 0},
  };

  // ---- DOM helpers (text only) ---------------------------------------------------------------

  // el('a', {href: '#/x', class: 'c', 'data-test': 't'}, 'text', child...) : attributes by
  // setAttribute, strings as text nodes.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'style' || name.startsWith('on')) throw new Error('no inline styles or handlers');
      node.setAttribute(name, value === true ? '' : String(value));
    }
  }

  function append(node, children) {
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  const $ = (id) => document.getElementById(id);

  // ---- formatting ----------------------------------------------------------------------------

  const dash = '–';

  function num(n) {
    return n === null || n === undefined ? dash : Number(n).toLocaleString('en-US');
  }

  // A group's events behind: counted up to a cap (1 000 on the lists, 10 000 on its own page), then "at least".
  function behind(g) {
    return num(g.events_behind) + (g.events_behind_capped ? '+' : '');
  }

  function behindCell(g) {
    return el('td', {class: 'num', 'data-test': 'events-behind',
      title: g.events_behind_capped ? 'at least: counted up to ' + num(g.events_behind) : null}, behind(g));
  }

  function bytes(n) {
    if (n === null || n === undefined) return dash;
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let v = Number(n), i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i === 0 ? String(v) : v.toFixed(1)) + ' ' + units[i];
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) return dash;
    let s = Math.abs(Number(seconds));
    if (s < 1) return s.toFixed(2) + ' s';
    if (s < 120) return s.toFixed(s < 10 ? 1 : 0) + ' s';
    if (s < 7200) return Math.round(s / 60) + ' min';
    if (s < 172800) return (s / 3600).toFixed(1) + ' h';
    return (s / 86400).toFixed(1) + ' d';
  }

  // A time as "12 s ago" / "in 3 s", the ISO text in its title: a <time> element.
  function when(iso) {
    if (!iso) return dash;
    const at = Date.parse(iso);
    const seconds = (Date.now() - at) / 1000;
    const text = Number.isNaN(at) ? iso : seconds >= 0 ? duration(seconds) + ' ago' : 'in ' + duration(-seconds);
    return el('time', {datetime: iso, title: iso}, text);
  }

  const eventCount = (n) => num(n) + (n === 1 ? ' event' : ' events');

  function pretty(value) {
    return JSON.stringify(value, null, 2);
  }

  function keyOf(event) {
    if (event.event_id !== null && event.event_id !== undefined) return String(event.event_id);
    if (event.event_key !== null && event.event_key !== undefined) return event.event_key;
    return dash;
  }

  function stateBadge(state) {
    return el('span', {class: 'state state-' + (STATES.includes(state) ? state : 'other'), 'data-test': 'state'}, state || dash);
  }

  const sourceHref = (name) => '#/sources/' + encodeURIComponent(name);
  const groupHref = (name) => '#/groups/' + encodeURIComponent(name);

  // ---- the API -------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  }

  async function api(path, options = {}) {
    const headers = {Accept: 'application/json'};
    const init = {method: options.method || 'GET', headers, credentials: 'same-origin', cache: 'no-store'};
    if (init.method !== 'GET') {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(options.body || {});
      const t = options.token !== undefined ? options.token : token();
      if (t) headers.Authorization = 'Bearer ' + t;
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (e) {
      throw new ApiError(0, 'the console did not answer (' + e.message + ')');
    }
    let body = null;
    try {
      body = await response.json();
    } catch (e) {
      body = null;
    }
    if (!response.ok) {
      const text = body && typeof body.error === 'string' ? body.error : response.statusText;
      throw new ApiError(response.status, response.status + ': ' + text);
    }
    return body;
  }

  function query(params) {
    return Object.entries(params)
      .filter(([, v]) => v !== '' && v !== null && v !== undefined)
      .map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v))
      .join('&');
  }

  // ---- the error banner ----------------------------------------------------------------------

  function showError(error) {
    $('error-text').textContent = error instanceof Error ? error.message : String(error);
    $('error-banner').hidden = false;
  }

  function clearError() {
    $('error-banner').hidden = true;
    $('error-text').textContent = '';
  }

  // ---- session and token ---------------------------------------------------------------------

  // Why actions are disabled, or null when they are allowed.
  function actionRefusal() {
    if (!app.session) return 'the console has not answered yet';
    if (app.session.read_only) return 'the console is read-only: start it with --token-env or --token-file';
    if (!token()) return 'enter the admin token (top right) to act';
    return null;
  }

  async function loadSession() {
    try {
      app.session = await api('/api/session');
      $('session-database').textContent = app.session.database || '';
      // "0.17.0 (commit 0123456789ab)": the number in the header, the whole in its tooltip.
      const version = app.session.version || '';
      $('session-version').textContent = version ? 'tributary ' + version.split(' ')[0] : '';
      $('session-version').title = version ? 'tributary ' + version : '';
    } catch (e) {
      showError(e);
    }
    renderTokenBox();
  }

  function renderTokenBox() {
    const readOnly = app.session && app.session.read_only;
    const input = $('token-input');
    input.disabled = !!readOnly;
    $('token-save').disabled = !!readOnly;
    $('token-clear').disabled = !!readOnly || !token();
    $('token-status').textContent = readOnly ? 'read-only console' : token() ? 'token in use' : 'no token: read-only';
    $('token-status').className = readOnly || !token() ? 'muted' : 'ok';
  }

  async function saveToken(event) {
    event.preventDefault();
    const typed = $('token-input').value.trim();
    if (!typed) return;
    $('token-status').textContent = 'checking…';
    try {
      await api('/api/session', {method: 'POST', token: typed});
      sessionStorage.setItem(TOKEN_KEY, typed);
      $('token-input').value = '';
      clearError();
      renderTokenBox();
      renderActionsState();
    } catch (e) {
      renderTokenBox();
      $('token-status').textContent = e.status === 401 ? 'token refused' : 'could not check the token';
      $('token-status').className = 'bad';
      if (e.status !== 401) showError(e);
    }
  }

  function forgetToken() {
    sessionStorage.removeItem(TOKEN_KEY);
    renderTokenBox();
    renderActionsState();
  }

  // Every action button carries data-action; they are enabled or disabled with the reason
  // shown next to them (data-test="action-reason") whenever the token changes.
  function renderActionsState() {
    const reason = actionRefusal();
    for (const button of document.querySelectorAll('button[data-action]')) {
      button.disabled = !!reason || button.dataset.busy === '1';
      if (reason) button.title = reason; else button.removeAttribute('title');
    }
    for (const note of document.querySelectorAll('[data-test="action-reason"]')) {
      note.textContent = reason || '';
      note.hidden = !reason;
    }
  }

  function actionButton(label, test, run) {
    const button = el('button', {type: 'button', 'data-action': test, 'data-test': test}, label);
    button.addEventListener('click', async () => {
      if (actionRefusal()) return;
      button.dataset.busy = '1';
      button.disabled = true;
      try {
        await run();
      } catch (e) {
        showError(e);
        if (e.status === 401) {
          // The console no longer takes this token (restarted with another): forget it, so
          // the buttons say why they are disabled instead of failing one by one.
          sessionStorage.removeItem(TOKEN_KEY);
          renderTokenBox();
          $('token-status').textContent = 'token refused';
          $('token-status').className = 'bad';
        }
      } finally {
        delete button.dataset.busy;
        renderActionsState();
      }
    });
    return button;
  }

  function actionReason() {
    return el('span', {class: 'reason', 'data-test': 'action-reason', hidden: true});
  }

  // A modal dialog; resolves with the value of ok() or null when cancelled. While one is
  // open the refresh waits.
  function dialog(title, body, okLabel, ok, canOk) {
    return new Promise((resolve) => {
      const error = el('p', {class: 'bad', 'data-test': 'dialog-error', hidden: true});
      const okButton = el('button', {type: 'submit', class: 'danger', 'data-test': 'dialog-ok'}, okLabel);
      const cancel = el('button', {type: 'button', 'data-test': 'dialog-cancel'}, 'Cancel');
      const form = el('form', {method: 'dialog'}, el('h2', {}, title), body, error, el('p', {class: 'buttons'}, okButton, ' ', cancel));
      const box = el('dialog', {'data-test': 'dialog'}, form);
      const check = () => { okButton.disabled = canOk ? !canOk() : false; };
      form.addEventListener('input', check);
      form.addEventListener('change', check);
      check();
      let done = false;
      const finish = (value) => {
        if (done) return;
        done = true;
        box.close();
        box.remove();
        resolve(value);
      };
      cancel.addEventListener('click', () => finish(null));
      box.addEventListener('cancel', () => finish(null));
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        if (canOk && !canOk()) return;
        okButton.disabled = true;
        try {
          finish(await ok());
        } catch (e) {
          error.textContent = e.message;
          error.hidden = false;
          check();
        }
      });
      document.body.append(box);
      box.showModal();
      const first = box.querySelector('input, select');
      if (first) first.focus();
    });
  }

  // ---- pieces of pages -----------------------------------------------------------------------

  // A bar chart of per-minute counts as inline SVG: {from, step_seconds, events[]}.
  function rateChart(series, test, label) {
    const events = (series && series.events) || [];
    const width = 600, height = 60, pad = 2;
    const max = Math.max(1, ...events.map((v) => Number(v) || 0));
    const bar = events.length ? width / events.length : width;
    const from = series && series.from ? Date.parse(series.from) : NaN;
    const step = (series && series.step_seconds) || 60;
    const chart = svg('svg', {viewBox: `0 0 ${width} ${height + 14}`, class: 'chart', role: 'img', 'aria-label': label, 'data-test': test});
    chart.append(svg('line', {x1: 0, y1: height, x2: width, y2: height, class: 'axis'}));
    events.forEach((value, i) => {
      const v = Number(value) || 0;
      const h = v === 0 ? 0 : Math.max(1, (v / max) * (height - pad));
      const at = Number.isNaN(from) ? '' : new Date(from + i * step * 1000).toISOString().slice(11, 16) + ' UTC: ';
      const rect = svg('rect', {x: (i * bar + 0.5).toFixed(2), y: (height - h).toFixed(2), width: Math.max(0.5, bar - 1).toFixed(2), height: h.toFixed(2), class: 'bar'});
      rect.append(svg('title', {}, at + num(v) + ' events'));
      chart.append(rect);
    });
    chart.append(svg('text', {x: 0, y: height + 12, class: 'tick'}, '−60 min'));
    chart.append(svg('text', {x: width, y: height + 12, class: 'tick end'}, 'now'));
    const total = events.reduce((a, v) => a + (Number(v) || 0), 0);
    const perSecond = events.length ? total / (events.length * step) : 0;
    return el('figure', {class: 'chart-box'}, chart,
      el('figcaption', {}, label + ': ' + num(total) + ' in the hour, ' + perSecond.toFixed(perSecond < 10 ? 2 : 0) + '/s on average, peak ' + num(max === 1 && total === 0 ? 0 : max) + '/min'));
  }

  function table(test, headers, rows) {
    const head = el('tr', {}, headers.map((h) => (h instanceof Node ? h : el('th', {scope: 'col'}, h))));
    return el('table', {'data-test': test}, el('thead', {}, head), el('tbody', {}, rows));
  }

  function definitions(test, pairs) {
    const list = el('dl', {class: 'facts', 'data-test': test});
    for (const [term, value, key] of pairs.filter(Boolean)) {
      list.append(el('dt', {}, term), el('dd', {'data-field': key || null}, value));
    }
    return list;
  }

  function section(title, ...children) {
    return el('section', {}, el('h2', {}, title), children);
  }

  function emptyRow(columns, text) {
    return el('tr', {class: 'empty'}, el('td', {colspan: columns}, text));
  }

  // ---- overview ------------------------------------------------------------------------------

  function overviewPage(main) {
    return {
      async refresh() {
        const o = await api('/api/overview');
        const content = el('div', {id: 'overview', 'data-test': 'overview'});

        content.append(el('h1', {}, 'Overview'));
        content.append(rateChart(o.rate, 'overview-rate', 'Events stored per minute, last hour'));
        if (o.log && !o.log.activity_through) {
          // The per-minute counts are folded from the log by the maintainer's pass.
          content.append(el('p', {class: 'reason', 'data-test': 'overview-no-fold'},
            'No maintainer has counted the log yet: the charts fill once `tributary maintain` (or `run`) has run a pass.'));
        }

        const states = o.sources && o.sources.by_state ? o.sources.by_state : {};
        const stateRows = STATES.map((state) => el('tr', {'data-state': state},
          el('td', {}, el('a', {href: '#/sources?state=' + encodeURIComponent(state)}, stateBadge(state))),
          el('td', {class: 'num'}, num(states[state] || 0))));
        const left = section('Sources: ' + num(o.sources && o.sources.total),
          table('overview-states', ['state', 'sources'], stateRows));

        const behind = (o.groups && o.groups.behind) || [];
        const groupRows = behind.length ? behind.map((g) => el('tr', {'data-group': g.name},
          el('td', {}, el('a', {href: groupHref(g.name)}, g.name)),
          behindCell(g),
          el('td', {class: 'num'}, duration(g.oldest_unprocessed_age)),
          el('td', {class: 'num' + (g.dead_letters > 0 ? ' bad' : '')}, num(g.dead_letters)))) : [emptyRow(4, 'no groups')];
        const middle = section('Groups most behind (of ' + num(o.groups && o.groups.total) + ')',
          table('overview-groups', ['group', 'behind', 'oldest unprocessed', 'dead letters'], groupRows));

        const log = o.log || {};
        const right = section('Log', definitions('overview-log', [
          ['size', bytes(log.bytes)], ['partitions', num(log.partitions)],
          ['oldest event', when(log.oldest_event_at)], ['counts complete to', when(log.activity_through)],
          ['as of', when(o.now)]]));
        content.append(el('div', {class: 'columns'}, left, middle, right));

        const attention = o.attention || [];
        const items = attention.length ? attention.map((a) => el('tr', {'data-kind': a.kind},
          el('td', {}, el('span', {class: 'kind kind-' + a.kind}, a.kind.replace(/_/g, ' '))),
          el('td', {}, attentionSubject(a)),
          el('td', {class: 'text'}, a.detail || ''),
          el('td', {}, when(a.since)))) : [emptyRow(4, 'nothing needs a person')];
        content.append(section('Needs attention (' + attention.length + ')',
          table('overview-attention', ['what', 'subject', 'detail', 'since'], items)));

        clear(main);
        main.append(content);
      },
    };
  }

  function attentionSubject(a) {
    if (!a.subject) return dash;
    if (a.kind === 'failing_source') return el('a', {href: sourceHref(a.subject)}, a.subject);
    if (a.kind === 'dead_letters' || a.kind === 'retention_held') return el('a', {href: groupHref(a.subject)}, a.subject);
    return a.subject;
  }

  // ---- sources -------------------------------------------------------------------------------

  function sourcesQuery() {
    const s = app.sources;
    return query({pattern: s.pattern, state: s.state, sort: s.sort, order: s.order, limit: s.limit, offset: s.offset});
  }

  const sourcesHash = () => '#/sources?' + sourcesQuery();

  function sourcesPage(main, params) {
    const s = app.sources;
    if (params.has('state')) s.state = STATES.includes(params.get('state')) ? params.get('state') : '';
    if (params.has('pattern')) s.pattern = params.get('pattern') || '>';
    if (params.has('sort') && Object.values(SORTABLE).includes(params.get('sort'))) s.sort = params.get('sort');
    if (params.has('order')) s.order = params.get('order') === 'desc' ? 'desc' : 'asc';
    if (params.has('offset')) s.offset = Math.max(0, parseInt(params.get('offset'), 10) || 0);
    if (params.has('limit')) s.limit = Math.min(500, Math.max(1, parseInt(params.get('limit'), 10) || 100));

    const pattern = el('input', {id: 'sources-pattern', 'data-test': 'sources-pattern', type: 'search', value: s.pattern, spellcheck: 'false', size: 24, 'aria-label': 'name pattern', title: "'*' is one dot-separated segment, a final '>' one or more"});
    const state = el('select', {id: 'sources-state', 'data-test': 'sources-state', 'aria-label': 'state'},
      el('option', {value: ''}, 'every state'), STATES.map((x) => el('option', {value: x}, x)));
    state.value = s.state;
    const limit = el('select', {id: 'sources-limit', 'data-test': 'sources-limit', 'aria-label': 'rows per page'},
      [50, 100, 200, 500].map((n) => el('option', {value: n}, n + ' a page')));
    limit.value = String(s.limit);
    const summary = el('span', {id: 'sources-summary', 'data-test': 'sources-summary', class: 'muted'});
    const headRow = el('tr');
    const body = el('tbody');
    const prev = el('button', {type: 'button', 'data-test': 'sources-prev'}, '← previous');
    const next = el('button', {type: 'button', 'data-test': 'sources-next'}, 'next →');
    const pageInfo = el('span', {'data-test': 'sources-page'});

    const columns = [['name', 'name'], ['kind'], ['state'], ['cursor', null, 'num'], ['stored', null, 'num'], ['lag', 'lag', 'num'],
      ['failures', 'failures', 'num'], ['last success', 'last_success_at'], ['last error'], ['next request']];
    for (const [label, field, align] of columns) {
      const sortKey = field && SORTABLE[field];
      if (!sortKey) { headRow.append(el('th', {scope: 'col', class: align}, label)); continue; }
      const sorted = s.sort === sortKey;
      const button = el('button', {type: 'button', class: 'sort', 'data-test': 'sort-' + sortKey}, label + (sorted ? (s.order === 'asc' ? ' ▲' : ' ▼') : ''));
      button.addEventListener('click', () => {
        if (s.sort === sortKey) s.order = s.order === 'asc' ? 'desc' : 'asc';
        else { s.sort = sortKey; s.order = sortKey === 'name' ? 'asc' : 'desc'; }
        s.offset = 0;
        rerender();
      });
      headRow.append(el('th', {scope: 'col', class: align, 'aria-sort': sorted ? (s.order === 'asc' ? 'ascending' : 'descending') : null}, button));
    }

    let typing = null;
    const apply = () => { s.pattern = pattern.value.trim() || '>'; s.offset = 0; reload(); };
    pattern.addEventListener('input', () => { clearTimeout(typing); typing = setTimeout(apply, 400); });
    pattern.addEventListener('search', () => { clearTimeout(typing); apply(); });
    pattern.addEventListener('keydown', (e) => { if (e.key === 'Enter') { clearTimeout(typing); apply(); } });
    state.addEventListener('change', () => { s.state = state.value; s.offset = 0; reload(); });
    limit.addEventListener('change', () => { s.limit = Number(limit.value); s.offset = 0; reload(); });
    prev.addEventListener('click', () => { s.offset = Math.max(0, s.offset - s.limit); reload(); });
    next.addEventListener('click', () => { s.offset += s.limit; reload(); });

    // Sorting changes the header: the page is drawn again from its state, kept in the address.
    function rerender() {
      history.replaceState(null, '', sourcesHash());
      route();
    }
    const reload = () => view.refresh().then(clearError, showError);

    clear(main);
    main.append(el('div', {id: 'sources', 'data-test': 'sources'},
      el('h1', {}, 'Sources'),
      el('p', {class: 'controls'}, el('label', {}, 'Pattern ', pattern), ' ', el('label', {}, 'State ', state), ' ', limit, ' ', summary),
      el('table', {'data-test': 'sources-table', class: 'wide'}, el('thead', {}, headRow), body),
      el('p', {class: 'pager'}, prev, ' ', pageInfo, ' ', next)));

    // Typing in the filter starts a read per pause: only the newest one's answer is drawn.
    let asked = 0;
    const view = {
      async refresh() {
        history.replaceState(null, '', sourcesHash());
        const mine = ++asked;
        const page = await api('/api/sources?' + sourcesQuery());
        if (mine !== asked) return;
        const rows = document.createDocumentFragment();
        for (const src of page.sources || []) {
          rows.append(el('tr', {'data-source': src.name},
            el('td', {}, el('a', {href: sourceHref(src.name), 'data-test': 'source-link'}, src.name)),
            el('td', {}, src.kind),
            el('td', {}, stateBadge(src.state)),
            el('td', {class: 'num'}, num(src.cursor)),
            el('td', {class: 'num'}, num(src.stored)),
            el('td', {class: 'num'}, num(src.lag)),
            el('td', {class: 'num' + (src.failures > 0 ? ' bad' : '')}, num(src.failures)),
            el('td', {}, when(src.last_success_at)),
            el('td', {class: 'text error-text', 'data-test': 'last-error', title: src.last_error_at || null}, src.last_error || ''),
            el('td', {}, when(src.next_request_at))));
        }
        if (!(page.sources || []).length) rows.append(emptyRow(columns.length, 'no source matches'));
        clear(body);
        body.append(rows);
        const first = page.matched ? page.offset + 1 : 0;
        const last = page.offset + (page.sources || []).length;
        summary.textContent = num(page.matched) + ' of ' + num(page.total) + ' sources match';
        pageInfo.textContent = num(first) + '–' + num(last);
        prev.disabled = page.offset <= 0;
        next.disabled = last >= page.matched;
      },
    };
    return view;
  }

  // ---- one source ----------------------------------------------------------------------------

  function sourcePage(main, name) {
    let said = '';   // what the last action answered: the page is drawn again after it
    const view = {
      async refresh() {
        const src = await api('/api/sources/' + encodeURIComponent(name));
        const pulled = src.kind === 'http';
        const reason = actionReason();
        const act = (verb) => async () => {
          const result = await api('/api/sources/' + encodeURIComponent(name) + '/' + verb, {method: 'POST', body: {}});
          said = (verb === 'nudge'
            ? (result.nudged ? 'nudged: asked at once by a running loader' : 'not nudged: only pulled sources are asked')
            : (result.enabled ? 'resumed' : 'paused'));
          await view.refresh();
        };
        const status = el('span', {class: 'muted', 'data-test': 'action-status', role: 'status'}, said);
        const actions = el('p', {class: 'actions'},
          src.enabled ? actionButton('Pause', 'pause', act('pause')) : actionButton('Resume', 'resume', act('resume')),
          ' ', pulled ? actionButton('Nudge', 'nudge', act('nudge')) : null, ' ', reason, ' ', status);

        const c = src.config || {};
        const config = [['kind', src.kind, 'kind']];
        if (c.url !== undefined) config.push(['url', el('code', {}, c.url || dash), 'url']);
        if (c.headers && c.headers.length) config.push(['headers', el('ul', {class: 'plain'}, c.headers.map((h) => el('li', {}, el('code', {}, h)))), 'headers']);
        for (const key of ['interval_ms', 'batch_size', 'timeout_ms']) {
          if (c[key] !== undefined && c[key] !== null) config.push([key.replace(/_/g, ' '), num(c[key]), key]);
        }
        for (const key of ['reading', 'receiving']) {
          if (c[key] && Object.keys(c[key]).length) config.push([key, el('pre', {class: 'json'}, pretty(c[key])), key]);
        }
        if (c.publishers && c.publishers.length) config.push(['publishers', c.publishers.join(', '), 'publishers']);

        const errors = (src.errors || []).map((e) => el('tr', {},
          el('td', {}, when(e.first_at)), el('td', {}, when(e.last_at)), el('td', {class: 'num'}, num(e.count)),
          el('td', {class: 'text error-text', 'data-test': 'error-text'}, e.error)));
        const events = (src.last_events || []).map((e) => el('tr', {'data-seq': e.seq},
          el('td', {class: 'num'}, num(e.seq)), el('td', {class: 'text'}, keyOf(e)), el('td', {}, when(e.loaded_at)),
          el('td', {}, el('pre', {class: 'json', 'data-test': 'payload'}, pretty(e.payload)))));

        const content = el('div', {id: 'source', 'data-test': 'source', 'data-name': src.name},
          el('p', {class: 'crumbs'}, el('a', {href: '#/sources'}, 'Sources'), ' / '),
          el('h1', {}, el('span', {'data-test': 'source-name'}, src.name), ' ', stateBadge(src.state),
            src.enabled ? null : el('span', {class: 'state state-paused', 'data-test': 'paused'}, 'paused')),
          actions,
          el('div', {class: 'columns'},
            section('Position', definitions('source-position', [
              ['state', src.state, 'state'], ['enabled', src.enabled ? 'yes' : 'no (paused)', 'enabled'],
              ['cursor', num(src.cursor), 'cursor'], ['stored', num(src.stored), 'stored'], ['lag', num(src.lag), 'lag'],
              ['failures', num(src.failures), 'failures'], ['failing since', when(src.failing_since), 'failing_since'],
              src.last_error ? ['last error', el('span', {class: 'error-text', 'data-test': 'last-error'}, src.last_error), 'last_error'] : null,
              ['last success', when(src.last_success_at)], ['last request', when(src.last_request_at)],
              ['next request', when(src.next_request_at)]])),
            section('Configuration', definitions('source-config', config))),
          rateChart(src.per_minute, 'source-rate', 'Events stored per minute, last hour'),
          section('Recent errors', table('source-errors', ['first', 'last', 'count', 'error'],
            errors.length ? errors : [emptyRow(4, 'no errors recorded')])),
          section('Last events', table('source-events', ['seq', 'id / key', 'loaded', 'payload'],
            events.length ? events : [emptyRow(4, 'no events')])));
        clear(main);
        main.append(content);
        renderActionsState();
      },
    };
    return view;
  }

  // ---- groups --------------------------------------------------------------------------------

  function groupRow(g, linked) {
    return [
      el('td', {}, linked ? el('a', {href: groupHref(g.name), 'data-test': 'group-link'}, g.name) : g.name),
      el('td', {}, el('code', {}, g.pattern)),
      el('td', {}, g.ordered ? 'yes' : 'no'),
      el('td', {class: 'num'}, num(g.max_deliveries)),
      lanesCell(g),
      behindCell(g),
      el('td', {class: 'num'}, duration(g.oldest_unprocessed_age)),
      el('td', {class: 'num'}, num(g.batches_in_flight)),
      el('td', {class: 'num'}, num(g.retries_waiting)),
      el('td', {class: 'num' + (g.dead_letters > 0 ? ' bad' : ''), 'data-test': 'dead-letters'}, num(g.dead_letters)),
      el('td', {class: 'num'}, num(g.holds_partitions)),
    ];
  }

  // A group of lanes (issue 28): how many, and how many nobody holds (their events wait).
  function lanesCell(g) {
    const lanes = g.lanes || 1;
    const unheld = g.unheld_lanes || 0;
    return el('td', {class: 'num' + (unheld > 0 ? ' bad' : ''), 'data-test': 'lanes',
      title: unheld > 0 ? 'no consumer holds ' + num(unheld) + ' of the lanes: their events wait' : null},
    num(lanes) + (unheld > 0 ? ' (' + num(unheld) + ' unheld)' : ''));
  }

  // Each lane of a group of lanes: who holds it and how far behind it is.
  function laneRows(g) {
    return (g.lane_rows || []).map((l) => el('tr', {'data-lane': l.lane, 'data-test': 'lane'},
      el('td', {class: 'num'}, num(l.lane)),
      l.holder === null || l.holder === undefined ? el('td', {class: 'bad', 'data-test': 'lane-holder'}, 'nobody: its events wait')
        : el('td', {'data-test': 'lane-holder'}, el('code', {}, l.holder)),
      behindCell(l),
      el('td', {class: 'num'}, duration(l.oldest_unprocessed_age)),
      el('td', {class: 'num'}, num(l.batches_in_flight)),
      el('td', {class: 'num'}, num(l.retries_waiting))));
  }

  const GROUP_COLUMNS = ['group', 'pattern', 'ordered', 'max deliveries', 'lanes', 'behind', 'oldest unprocessed',
    'in flight', 'retries', 'dead letters', 'holds partitions'];

  // The first three columns are text, the rest numbers (aligned right, as their cells).
  function groupHead() {
    return el('thead', {}, el('tr', {}, GROUP_COLUMNS.map((h, i) => el('th', {scope: 'col', class: i >= 3 ? 'num' : null}, h))));
  }

  function groupsPage(main) {
    return {
      async refresh() {
        const page = await api('/api/groups');
        const groups = page.groups || [];
        const rows = groups.length ? groups.map((g) => el('tr', {'data-group': g.name}, groupRow(g, true)))
          : [emptyRow(GROUP_COLUMNS.length, 'no groups: tributary group create NAME --pattern P')];
        clear(main);
        main.append(el('div', {id: 'groups', 'data-test': 'groups'}, el('h1', {}, 'Groups (' + groups.length + ')'),
          el('table', {'data-test': 'groups-table', class: 'wide'},
            groupHead(), el('tbody', {}, rows))));
      },
    };
  }

  function groupPage(main, name, params) {
    let offset = Math.max(0, parseInt(params.get('offset'), 10) || 0);
    const limit = 50;
    const path = '/api/groups/' + encodeURIComponent(name);
    let said = '';   // what the last action answered: the page is drawn again after it
    const view = {
      async refresh() {
        const g = await api(path + '?' + query({limit, offset}));
        const page = g.dead_letter_page || {total: 0, offset: 0, limit, items: []};
        const status = el('span', {class: 'muted', 'data-test': 'action-status', role: 'status'}, said);

        const replayAll = actionButton('Replay all', 'replay-all', async () => {
          const done = await dialog('Replay every dead letter of ' + name + '?',
            el('p', {}, 'The ' + num(page.total) + ' dead letters go back to the group as retries, with their deliveries counted again from zero.'),
            'Replay all', () => api(path + '/replay', {method: 'POST', body: {}}));
          if (done) { said = 'replayed ' + num(done.replayed); await view.refresh(); }
        });

        const reset = actionButton('Reset…', 'reset', async () => {
          const to = el('select', {'data-test': 'reset-to'}, el('option', {value: 'time'}, 'events loaded since a time'),
            el('option', {value: 'beginning'}, 'the beginning of the log'), el('option', {value: 'end'}, 'the end (skip everything)'));
          const time = el('input', {type: 'text', 'data-test': 'reset-time', placeholder: '2026-11-24T10:00:00Z', size: 26, spellcheck: 'false'});
          const confirm = el('input', {type: 'text', 'data-test': 'reset-confirm', size: 26, spellcheck: 'false', autocomplete: 'off'});
          to.addEventListener('change', () => { time.disabled = to.value !== 'time'; });
          const target = () => (to.value === 'time' ? time.value.trim() : to.value);
          const done = await dialog('Reset ' + name,
            el('div', {},
              el('p', {}, 'The group forgets its position, its batches in flight and its retries, and reads again from:'),
              el('p', {}, to, ' ', time),
              el('p', {}, 'Type the group\u2019s name, ', el('code', {}, name), ', to confirm:'),
              el('p', {}, confirm)),
            'Reset', () => api(path + '/reset', {method: 'POST', body: {to: target(), confirm: confirm.value}}),
            () => confirm.value === name && target() !== '');
          if (done) { said = 'reset'; await view.refresh(); }
        });

        const items = (page.items || []).map((d) => el('tr', {'data-seq': d.seq, 'data-test': 'dead-letter'},
          el('td', {class: 'num'}, num(d.seq)),
          el('td', {}, el('a', {href: sourceHref(d.source)}, d.source)),
          el('td', {class: 'text'}, keyOf(d)),
          el('td', {class: 'num'}, num(d.deliveries)),
          el('td', {}, when(d.failed_at)),
          el('td', {class: 'text error-text', 'data-test': 'dead-letter-error'}, d.error || ''),
          el('td', {}, el('pre', {class: 'json', 'data-test': 'payload'}, pretty(d.payload))),
          el('td', {}, actionButton('Replay', 'replay', async () => {
            const result = await api(path + '/replay', {method: 'POST', body: {seq: d.seq}});
            said = 'replayed ' + num(result.replayed);
            await view.refresh();
          }))));

        const prev = el('button', {type: 'button', 'data-test': 'dead-letters-prev', disabled: page.offset <= 0}, '← previous');
        const next = el('button', {type: 'button', 'data-test': 'dead-letters-next', disabled: page.offset + items.length >= page.total}, 'next →');
        const reload = () => view.refresh().then(clearError, showError);
        prev.addEventListener('click', () => { offset = Math.max(0, offset - limit); reload(); });
        next.addEventListener('click', () => { offset += limit; reload(); });

        clear(main);
        main.append(el('div', {id: 'group', 'data-test': 'group', 'data-name': g.name},
          el('p', {class: 'crumbs'}, el('a', {href: '#/groups'}, 'Groups'), ' / '),
          el('h1', {'data-test': 'group-name'}, g.name),
          el('table', {'data-test': 'group-table', class: 'wide'},
            groupHead(),
            el('tbody', {}, el('tr', {}, groupRow(g, false)))),
          el('p', {class: 'actions'}, replayAll, ' ', reset, ' ', actionReason(), ' ', status),
          (g.lanes || 1) > 1 ? section('Lanes (' + num(g.lanes) + ')',
            table('lanes', ['lane', 'holder', 'behind', 'oldest unprocessed', 'in flight', 'retries'], laneRows(g))) : null,
          section('Dead letters (' + num(page.total) + ')',
            table('dead-letters', ['seq', 'source', 'id / key', 'deliveries', 'failed', 'last error', 'payload', ''],
              items.length ? items : [emptyRow(8, 'no dead letters')]),
            page.total > limit ? el('p', {class: 'pager'}, prev, ' ',
              num(page.offset + 1) + '–' + num(page.offset + items.length) + ' of ' + num(page.total), ' ', next) : null)));
        renderActionsState();
      },
    };
    return view;
  }

  // ---- live tail -----------------------------------------------------------------------------

  function tailPage(main, params) {
    let source = null;
    let count = 0;
    const pattern = el('input', {id: 'tail-pattern', 'data-test': 'tail-pattern', type: 'search', value: params.get('pattern') || '>', spellcheck: 'false', size: 24, 'aria-label': 'pattern'});
    const start = el('button', {type: 'button', 'data-test': 'tail-start'}, 'Start');
    const stop = el('button', {type: 'button', 'data-test': 'tail-stop', disabled: true}, 'Stop');
    const clearButton = el('button', {type: 'button', 'data-test': 'tail-clear'}, 'Clear');
    const status = el('span', {'data-test': 'tail-status', class: 'muted', role: 'status'}, 'stopped');
    const lines = el('ol', {id: 'tail-lines', 'data-test': 'tail-lines', class: 'tail', reversed: true});

    function setRunning(running, text) {
      start.disabled = running;
      stop.disabled = !running;
      pattern.disabled = running;
      status.textContent = text;
    }

    function line(e) {
      count++;
      const item = el('li', {'data-test': 'tail-line', 'data-source': e.source, 'data-seq': e.seq},
        el('time', {datetime: e.loaded_at, title: e.loaded_at}, e.loaded_at ? e.loaded_at.slice(11, 23) : dash), ' ',
        el('a', {href: sourceHref(e.source), class: 'source'}, e.source), ' ',
        el('span', {class: 'muted'}, '#' + e.seq + ' · ' + keyOf(e)), ' ',
        el('code', {class: 'payload', 'data-test': 'tail-payload'}, JSON.stringify(e.payload)));
      lines.prepend(item);
      while (lines.childElementCount > TAIL_KEEP) lines.lastElementChild.remove();
      status.textContent = 'streaming: ' + eventCount(count) + (count > TAIL_KEEP ? ' (the newest ' + TAIL_KEEP + ' kept)' : '');
    }

    // EventSource hides the status of a refused stream: ask once more with fetch for the text.
    async function explainFailure(url) {
      const abort = new AbortController();
      try {
        const response = await fetch(url, {signal: abort.signal, headers: {Accept: 'text/event-stream'}});
        if (!response.ok) {
          let text = response.statusText;
          try { text = (await response.json()).error || text; } catch (e) { /* not JSON */ }
          return response.status + ': ' + text;
        }
        return 'the stream ended';
      } catch (e) {
        return 'the console did not answer';
      } finally {
        abort.abort();
      }
    }

    function begin() {
      const p = pattern.value.trim() || '>';
      history.replaceState(null, '', '#/tail?' + query({pattern: p}));
      const url = '/api/tail?' + query({pattern: p, from: 'end'});
      source = new EventSource(url);
      setRunning(true, 'connecting…');
      source.addEventListener('open', () => { status.textContent = 'streaming: ' + eventCount(count); clearError(); });
      source.addEventListener('event', (m) => {
        try { line(JSON.parse(m.data)); } catch (e) { showError('a tail event that is not JSON: ' + e.message); }
      });
      source.addEventListener('error', async () => {
        if (!source) return;
        if (source.readyState === EventSource.CONNECTING) { status.textContent = 'reconnecting…'; return; }
        end();
        showError('live tail: ' + await explainFailure(url));
      });
    }

    function end() {
      if (source) source.close();
      source = null;
      setRunning(false, 'stopped');
    }

    start.addEventListener('click', begin);
    stop.addEventListener('click', end);
    clearButton.addEventListener('click', () => { clear(lines); count = 0; });
    pattern.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !source) begin(); });

    clear(main);
    main.append(el('div', {id: 'tail', 'data-test': 'tail'}, el('h1', {}, 'Live tail'),
      el('p', {class: 'controls'}, el('label', {}, 'Pattern ', pattern), ' ', start, ' ', stop, ' ', clearButton, ' ', status),
      el('p', {class: 'muted'}, 'Events as they are committed, newest on top; the newest ' + TAIL_KEEP + ' are kept.'),
      lines));
    return {refresh: null, stop: end, start: begin};
  }

  // ---- routing -------------------------------------------------------------------------------

  function parseHash() {
    const hash = location.hash.replace(/^#/, '') || '/';
    const [path, search] = hash.split('?');
    const parts = path.split('/').filter(Boolean).map((p) => {
      try { return decodeURIComponent(p); } catch (e) { return p; }
    });
    return {parts, params: new URLSearchParams(search || '')};
  }

  let timer = null;

  function stopView() {
    clearInterval(timer);
    timer = null;
    if (app.view && app.view.stop) app.view.stop();
    app.view = null;
  }

  // A refresh is skipped while a dialog is open, the tab is hidden or the operator is
  // selecting text on the page (redrawing would drop the selection).
  function shouldRefresh() {
    if (document.hidden || document.querySelector('dialog[open]')) return false;
    const selection = window.getSelection();
    return !(selection && !selection.isCollapsed && $('main').contains(selection.anchorNode));
  }

  function route() {
    stopView();
    const {parts, params} = parseHash();
    const main = $('main');
    const page = parts[0] || 'overview';
    for (const link of document.querySelectorAll('#nav a')) {
      link.classList.toggle('current', link.dataset.route === page || (page === 'overview' && link.dataset.route === 'overview'));
    }
    let view, periodic = false;
    if (page === 'overview') { view = overviewPage(main); periodic = true; }
    else if (page === 'sources' && parts.length === 1) { view = sourcesPage(main, params); periodic = true; }
    else if (page === 'sources') view = sourcePage(main, parts.slice(1).join('/'));
    else if (page === 'groups' && parts.length === 1) { view = groupsPage(main); periodic = true; }
    else if (page === 'groups') view = groupPage(main, parts.slice(1).join('/'), params);
    else if (page === 'tail') view = tailPage(main, params);
    else {
      clear(main);
      main.append(el('h1', {}, 'No such page'), el('p', {}, el('a', {href: '#/'}, 'Overview')));
      return;
    }
    app.view = view;
    document.title = 'tributary: ' + (parts.length > 1 ? parts.slice(1).join('/') : page);
    if (!view.refresh) return;
    const current = view;
    let loading = false;   // a slow answer is not asked for again on top of itself
    const load = () => {
      if (loading) return;
      loading = true;
      current.refresh().finally(() => { loading = false; }).then(() => { if (app.view === current) clearError(); }, (e) => {
        if (app.view !== current) return;
        showError(e);
        if (e.status === 404) { clear(main); main.append(el('h1', {}, 'Not found'), el('p', {'data-test': 'not-found'}, e.message)); }
      });
    };
    load();
    if (periodic) timer = setInterval(() => { if (shouldRefresh()) load(); }, REFRESH_MS);
  }

  // Keys: "/" focuses the page's filter or pattern box; "r" refreshes now.
  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target && (target.tagName === 'INPUT' || target.tagName === 'SELECT' || target.tagName === 'TEXTAREA')) return;
    if (document.querySelector('dialog[open]')) return;
    if (event.key === '/') {
      const box = $('sources-pattern') || $('tail-pattern');
      if (box) { event.preventDefault(); box.focus(); box.select(); }
    } else if (event.key === 'r' && app.view && app.view.refresh) {
      app.view.refresh().then(clearError, showError);
    }
  }

  function start() {
    $('token-form').addEventListener('submit', saveToken);
    $('token-clear').addEventListener('click', forgetToken);
    $('error-dismiss').addEventListener('click', clearError);
    window.addEventListener('hashchange', route);
    document.addEventListener('keydown', onKey);
    loadSession().then(renderActionsState);
    route();
  }

  document.addEventListener('DOMContentLoaded', start);
})();
