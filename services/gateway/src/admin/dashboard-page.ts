/**
 * GET /admin (API.md §7): the admin dashboard. A self-contained page — no external scripts,
 * styles or fonts; its one <script> and <style> carry the response's CSP nonce. It holds no data:
 * it asks for the admin token (kept in sessionStorage only) and sends it on its own calls to
 * /admin/api. Everything it shows is set with textContent, never parsed as HTML.
 */
import { checkedNonce } from '../openapi/docs-page.js';

const style = `
:root { --fg: #1d2330; --muted: #5d6678; --bg: #f5f7fa; --card: #fff; --line: #dde2ea; --accent: #2456c7;
  --ok: #1f7a44; --warn: #8a5a00; --bad: #b3261e; --code: #eef1f6; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e4e8ef; --muted: #9aa4b5; --bg: #14171c; --card: #1c2027; --line: #2e343e; --accent: #7ea6ff;
    --ok: #5fcf8e; --warn: #e6b450; --bad: #ff8a80; --code: #252a33; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
header.top { display: flex; gap: 12px; align-items: center; padding: 10px 20px; background: var(--card); border-bottom: 1px solid var(--line); }
header.top h1 { font-size: 17px; margin: 0; flex: 1; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 20px 48px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin: 0 0 16px; }
h2 { font-size: 16px; margin: 0 0 10px; } h3 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
form.row, .row { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; }
label { display: flex; flex-direction: column; gap: 2px; font-size: 12px; color: var(--muted); }
input, select, button { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 4px; background: var(--card); color: var(--fg); }
input.wide { min-width: 260px; } input.narrow { width: 110px; }
button { cursor: pointer; } button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { color: var(--bad); } button:disabled { opacity: .45; cursor: default; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid var(--line); }
th { font-size: 12px; color: var(--muted); font-weight: 600; } td.actions { white-space: nowrap; } td.actions button { padding: 2px 8px; margin-right: 4px; }
.muted { color: var(--muted); } .small { font-size: 12px; } .error { color: var(--bad); }
.badge { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; border: 1px solid currentColor; }
.s-ok { color: var(--ok); } .s-warn { color: var(--warn); } .s-bad { color: var(--bad); } .s-idle { color: var(--muted); }
.notice { padding: 8px 12px; border-radius: 6px; margin: 0 0 12px; border: 1px solid var(--line); background: var(--card); }
.notice.error { border-color: var(--bad); } .notice.info { border-color: var(--ok); }
.secret { border-color: var(--warn); } .secret input { flex: 1; min-width: 320px; font-family: ui-monospace, Menlo, Consolas, monospace; }
.warn { color: var(--warn); font-weight: 600; }
progress { width: 90px; vertical-align: middle; }
[hidden] { display: none !important; }
`;

/* The page's script. Plain ES2017, no template literals: it is embedded in a TypeScript string. */
const script = String.raw`
(function () {
  'use strict';
  var TOKEN_KEY = 'switchboard.adminToken';
  var STATUS_EVERY_MS = 5000;
  var token = null;
  var statusTimer = null;
  var statusBusy = false;
  var statusAgain = false;
  var keysById = {};
  var editing = null;

  function $(id) { return document.getElementById(id); }
  function el(tag, className, children) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (children === undefined || children === null) return node;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (child) {
      if (child === undefined || child === null || child === false) return;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    });
    return node;
  }
  function button(label, className, onClick) {
    var b = el('button', className, label);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }
  function when(iso) {
    if (!iso) return '—';
    var d = new Date(iso);
    return isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
  }
  /** How long ago, coarsely ("12 s", "3 min", "2 h", "4 d"): enough to spot a stuck job. */
  function age(iso) {
    var t = iso ? new Date(iso).getTime() : NaN;
    if (isNaN(t)) return '—';
    var s = Math.max(0, Math.floor((Date.now() - t) / 1000));
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min';
    if (s < 86400) return Math.floor(s / 3600) + ' h';
    return Math.floor(s / 86400) + ' d';
  }
  function cell(content, className) { return el('td', className, content); }
  function emptyRow(columns, text) { var td = cell(text, 'muted'); td.colSpan = columns; return el('tr', '', td); }
  function badge(text, tone) { return el('span', 'badge ' + tone, text); }

  function notice(message, kind) {
    var box = $('notice');
    box.textContent = message;
    box.className = 'notice ' + (kind || 'error');
    box.hidden = !message;
  }
  function failed(error) {
    if (error && error.status === 401) { signOut('The admin token was refused: ' + error.message); return; }
    notice(error && error.message ? error.message : String(error), 'error');
  }

  function api(method, path, body) {
    var init = { method: method, headers: { authorization: 'Bearer ' + token, accept: 'application/json' } };
    if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(path, init).then(function (res) {
      if (res.status === 204) return null;
      return res.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        if (!res.ok) {
          var info = data && data.error ? data.error : {};
          var error = new Error(info.message || 'HTTP ' + res.status);
          error.status = res.status;
          error.code = info.code;
          throw error;
        }
        return data;
      });
    }, function (error) { throw new Error('Network error: ' + (error && error.message ? error.message : String(error))); });
  }

  // --- sign-in -------------------------------------------------------------------------------
  function signIn(value) {
    token = value;
    $('login-error').textContent = '';
    return api('GET', '/admin/api/keys').then(function (body) {
      try { sessionStorage.setItem(TOKEN_KEY, value); } catch (e) { /* storage disabled: keep it in memory */ }
      $('login').hidden = true;
      $('app').hidden = false;
      $('signout').hidden = false;
      showKeys(body);
      refreshStatus();
      if (statusTimer === null) statusTimer = setInterval(refreshStatus, STATUS_EVERY_MS);
    }).catch(function (error) {
      if (error && error.status === 401) signOut('The admin token was refused.');
      else { token = null; $('login-error').textContent = error && error.message ? error.message : String(error); }
    });
  }
  function signOut(message) {
    token = null;
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* nothing stored */ }
    if (statusTimer !== null) { clearInterval(statusTimer); statusTimer = null; }
    hideSecret();
    $('edit-card').hidden = true;
    $('keys').replaceChildren();
    $('app').hidden = true;
    $('signout').hidden = true;
    $('login').hidden = false;
    $('token').value = '';
    $('login-error').textContent = message || '';
  }

  // --- keys ----------------------------------------------------------------------------------
  function loadKeys() { return api('GET', '/admin/api/keys').then(showKeys).catch(failed); }

  function showKeys(body) {
    var keys = (body && body.data) || [];
    var tbody = $('keys');
    keysById = {};
    tbody.replaceChildren();
    if (keys.length === 0) tbody.appendChild(emptyRow(9, 'No keys yet.'));
    keys.forEach(function (key) {
      keysById[key.id] = key;
      var active = key.status === 'active';
      var allow = key.ip_allowlist && key.ip_allowlist.length ? key.ip_allowlist.join(', ') : 'everyone';
      var actions = [
        button('Edit', '', function () { startEdit(key.id); }),
        button('Rotate', '', function () { rotate(key.id); }),
        button('Revoke', 'danger', function () { revoke(key.id); }),
      ];
      if (!active) actions.forEach(function (b) { b.disabled = true; });
      tbody.appendChild(el('tr', '', [
        cell([el('div', '', key.name), el('div', 'muted small mono', key.id)]),
        cell(el('code', '', key.prefix || '')),
        cell(key.tier),
        cell(allow, allow === 'everyone' ? 'muted' : 'mono small'),
        cell(key.rate_limit_per_minute === null || key.rate_limit_per_minute === undefined ? 'tier default' : String(key.rate_limit_per_minute)),
        cell(when(key.created_at), 'small'),
        cell(key.last_used_at ? when(key.last_used_at) : 'never', 'small'),
        cell(badge(key.status, active ? 's-ok' : 's-bad')),
        cell(actions, 'actions'),
      ]));
    });
  }

  function parseAllowlist(text) { return String(text).split(/[\s,]+/).filter(Boolean); }
  /** '' = no override (null); otherwise a positive whole number, or undefined when invalid. */
  function parseLimit(text) {
    var value = String(text).trim();
    if (value === '') return null;
    return /^[0-9]+$/.test(value) && Number(value) >= 1 ? Number(value) : undefined;
  }

  function showSecret(title, key) {
    $('secret-title').textContent = title;
    $('secret-value').value = key;
    $('copy').textContent = 'Copy';
    $('secret').hidden = false;
  }
  function hideSecret() {
    $('secret-value').value = '';
    $('secret').hidden = true;
  }

  function createKey(event) {
    event.preventDefault();
    var limit = parseLimit($('create-limit').value);
    if (limit === undefined) { notice('The rate limit must be a whole number of at least 1, or empty for the tier default.'); return; }
    var body = { name: $('create-name').value.trim(), tier: $('create-tier').value };
    var allow = parseAllowlist($('create-allowlist').value);
    if (allow.length) body.ip_allowlist = allow;
    if (limit !== null) body.rate_limit_per_minute = limit;
    api('POST', '/admin/api/keys', body).then(function (created) {
      notice('');
      showSecret('New API key for "' + created.name + '" (' + created.tier + ')', created.key);
      $('create-name').value = '';
      $('create-allowlist').value = '';
      $('create-limit').value = '';
      return loadKeys();
    }).catch(failed);
  }

  function startEdit(id) {
    var key = keysById[id];
    if (!key) return;
    editing = id;
    $('edit-id').textContent = id;
    $('edit-name').value = key.name;
    $('edit-tier').value = key.tier;
    $('edit-allowlist').value = (key.ip_allowlist || []).join(', ');
    $('edit-limit').value = key.rate_limit_per_minute === null || key.rate_limit_per_minute === undefined ? '' : String(key.rate_limit_per_minute);
    $('edit-card').hidden = false;
    if ($('edit-card').scrollIntoView) $('edit-card').scrollIntoView();
  }

  function saveEdit(event) {
    event.preventDefault();
    if (!editing) return;
    var limit = parseLimit($('edit-limit').value);
    if (limit === undefined) { notice('The rate limit must be a whole number of at least 1, or empty for the tier default.'); return; }
    var id = editing;
    var patch = {
      name: $('edit-name').value.trim(),
      tier: $('edit-tier').value,
      ip_allowlist: parseAllowlist($('edit-allowlist').value),
      rate_limit_per_minute: limit,
    };
    api('PATCH', '/admin/api/keys/' + encodeURIComponent(id), patch).then(function (key) {
      editing = null;
      $('edit-card').hidden = true;
      notice('Saved "' + key.name + '".', 'info');
      return loadKeys();
    }).catch(failed);
  }

  function rotate(id) {
    var key = keysById[id];
    var answer = window.prompt('Rotate "' + (key ? key.name : id) + '". Seconds the old key keeps working (0–86400):', '0');
    if (answer === null) return;
    var grace = String(answer).trim() === '' ? 0 : Number(answer);
    if (!/^[0-9]*$/.test(String(answer).trim()) || grace > 86400) { notice('The grace period must be a whole number of seconds from 0 to 86400.'); return; }
    api('POST', '/admin/api/keys/' + encodeURIComponent(id) + '/rotate', { grace_seconds: grace }).then(function (rotated) {
      notice('');
      showSecret('Rotated key for "' + (key ? key.name : rotated.id) + '"' + (grace ? ' (the old key works for ' + grace + ' s more)' : ''), rotated.key);
      return loadKeys();
    }).catch(failed);
  }

  function revoke(id) {
    var key = keysById[id];
    if (!window.confirm('Revoke "' + (key ? key.name : id) + '" (' + id + ')? It is refused everywhere within seconds; this cannot be undone.')) return;
    api('DELETE', '/admin/api/keys/' + encodeURIComponent(id)).then(function () {
      if (editing === id) { editing = null; $('edit-card').hidden = true; }
      notice('Revoked "' + (key ? key.name : id) + '".', 'info');
      return loadKeys();
    }).catch(failed);
  }

  // --- cluster status ------------------------------------------------------------------------
  function tone(status) {
    if (status === 'SERVING' || status === 'active' || status === 'running' || status === 'succeeded') return 's-ok';
    if (status === 'NOT_SERVING' || status === 'queued') return 's-warn';
    if (status === 'UNREACHABLE' || status === 'failed') return 's-bad';
    return 's-idle';
  }
  function table(headings, rows) {
    var head = el('tr', '', headings.map(function (h) { return el('th', '', h); }));
    var t = el('table', '', el('thead', '', head));
    var body = el('tbody');
    if (rows.length === 0) body.appendChild(emptyRow(headings.length, 'None.'));
    rows.forEach(function (r) { body.appendChild(r); });
    t.appendChild(body);
    return t;
  }
  function unavailable(text) { return el('p', 'muted', [badge('unavailable', 's-bad'), ' ' + text]); }

  function cancelJob(job, b) {
    if (!window.confirm('Cancel job ' + job.job_id + ' (key ' + job.key_id + ')? A running job stops within seconds.')) return;
    b.disabled = true;
    api('DELETE', '/admin/api/jobs/' + encodeURIComponent(job.job_id)).then(function (canceled) {
      notice('Canceled job ' + canceled.job_id + '.', 'info');
    }).catch(failed).then(function () { refreshStatus(true); });
  }
  function jobRow(j) {
    var fraction = Math.min(1, Math.max(0, Number(j.progress) || 0));
    var bar = el('progress');
    bar.max = 1;
    bar.value = fraction;
    var created = cell(age(j.created_at), 'small');
    created.title = when(j.created_at);
    var actions = [];
    if (j.status === 'queued' || j.status === 'running') {
      var b = button('Cancel', 'danger', function () { cancelJob(j, b); });
      actions.push(b);
    }
    return el('tr', '', [
      cell(j.job_id, 'mono small'), cell(j.key_id, 'mono small'), cell(j.backend), cell(badge(j.status, tone(j.status))),
      cell([bar, ' ' + Math.round(fraction * 100) + '%'], 'small'), created, cell(String(j.attempts), 'small'), cell(actions, 'actions'),
    ]);
  }

  function showStatus(status) {
    var workers = (status && status.workers) || [];
    $('workers').replaceChildren(table(['worker', 'address', 'health'], workers.map(function (w) {
      return el('tr', '', [cell(w.name), cell(w.address, 'mono small'), cell(badge(w.status, tone(w.status)))]);
    })));
    var sessions = status ? status.browser_sessions : null;
    $('sessions').replaceChildren(!Array.isArray(sessions) ? unavailable('The browser worker cannot be reached.') : table(['session', 'status', 'current URL', 'owner key', 'created'], sessions.map(function (s) {
      return el('tr', '', [cell(s.session_id, 'mono small'), cell(badge(s.status, tone(s.status))), cell(s.current_url || '—', 'small'), cell(s.owner_key_id, 'mono small'), cell(when(s.created_at), 'small')]);
    })));
    var jobs = status ? status.animation_jobs : null;
    $('jobs').replaceChildren(!Array.isArray(jobs) ? unavailable('The job store cannot be read.') : table(['job', 'owner key', 'backend', 'status', 'progress', 'age', 'attempts', ''], jobs.map(jobRow)));
    $('status-updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  }

  /** now: a change was just made, so a poll already in flight is followed by another. */
  function refreshStatus(now) {
    if (token === null) return;
    if (statusBusy) { if (now === true) statusAgain = true; return; }
    statusBusy = true;
    api('GET', '/admin/api/status').then(function (status) {
      $('status-error').textContent = '';
      showStatus(status);
    }).catch(function (error) {
      if (error && error.status === 401) { failed(error); return; }
      $('status-error').textContent = 'Status unavailable: ' + (error && error.message ? error.message : String(error));
    }).then(function () {
      statusBusy = false;
      if (statusAgain) { statusAgain = false; refreshStatus(); }
    });
  }

  // --- wiring --------------------------------------------------------------------------------
  $('login-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var value = $('token').value.trim();
    if (value) signIn(value);
  });
  $('signout').addEventListener('click', function () { signOut(''); });
  $('create-form').addEventListener('submit', createKey);
  $('edit-form').addEventListener('submit', saveEdit);
  $('edit-cancel').addEventListener('click', function () { editing = null; $('edit-card').hidden = true; });
  $('rotate-current').addEventListener('click', function () { if (editing) rotate(editing); });
  $('refresh-keys').addEventListener('click', function () { loadKeys(); });
  $('secret-done').addEventListener('click', hideSecret);
  $('copy').addEventListener('click', function () {
    var input = $('secret-value');
    function copied() { $('copy').textContent = 'Copied'; }
    function fallback() {
      input.select();
      try { if (document.execCommand('copy')) { copied(); return; } } catch (e) { /* not supported */ }
      $('copy').textContent = 'Select and copy by hand';
    }
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(input.value).then(copied, fallback);
    else fallback();
  });

  var saved = null;
  try { saved = sessionStorage.getItem(TOKEN_KEY); } catch (e) { saved = null; }
  if (saved) signIn(saved);
})();
`;

const tierOptions =
  '<option value="basic">basic</option><option value="professional">professional</option><option value="enterprise">enterprise</option>';

/** The /admin page; `nonce` is the one the response's Content-Security-Policy allows. */
export function dashboardPage(nonce: string): string {
  const n = checkedNonce(nonce);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>Switchboard admin</title>
<style nonce="${n}">${style}</style>
</head>
<body>
<header class="top">
  <h1>Switchboard admin</h1>
  <button id="signout" type="button" hidden>Sign out</button>
</header>
<main>
  <section id="login" class="card">
    <h2>Sign in</h2>
    <form id="login-form" class="row" autocomplete="off">
      <label>Admin token <input id="token" class="wide" type="password" autocomplete="off" required></label>
      <button class="primary" type="submit">Sign in</button>
    </form>
    <p class="muted small">The token stays in this tab (sessionStorage) and is sent only to this gateway's /admin/api.</p>
    <p id="login-error" class="error"></p>
    <noscript><p class="error">This page needs JavaScript.</p></noscript>
  </section>

  <div id="app" hidden>
    <div id="notice" class="notice" hidden></div>

    <section id="secret" class="card secret" hidden>
      <h2 id="secret-title">New API key</h2>
      <p class="warn">Copy it now: it will not be shown again.</p>
      <div class="row">
        <input id="secret-value" type="text" readonly aria-label="API key">
        <button id="copy" type="button">Copy</button>
        <button id="secret-done" type="button">Done</button>
      </div>
    </section>

    <section class="card">
      <h2>API keys</h2>
      <form id="create-form" class="row" autocomplete="off">
        <label>Name <input id="create-name" type="text" required maxlength="100"></label>
        <label>Tier <select id="create-tier">${tierOptions}</select></label>
        <label>IP allowlist (CIDRs, comma-separated; empty = everyone) <input id="create-allowlist" class="wide" type="text"></label>
        <label>Requests / minute (empty = tier default) <input id="create-limit" class="narrow" type="number" min="1" step="1"></label>
        <button class="primary" type="submit">Create key</button>
        <button id="refresh-keys" type="button">Refresh</button>
      </form>
      <h3>Keys</h3>
      <table>
        <thead><tr><th>name / id</th><th>prefix</th><th>tier</th><th>IP allowlist</th><th>limit / min</th><th>created</th><th>last used</th><th>status</th><th></th></tr></thead>
        <tbody id="keys"></tbody>
      </table>
    </section>

    <section id="edit-card" class="card" hidden>
      <h2>Edit key <code id="edit-id"></code></h2>
      <form id="edit-form" class="row" autocomplete="off">
        <label>Name <input id="edit-name" type="text" required maxlength="100"></label>
        <label>Tier <select id="edit-tier">${tierOptions}</select></label>
        <label>IP allowlist (CIDRs; empty = everyone) <input id="edit-allowlist" class="wide" type="text"></label>
        <label>Requests / minute (empty = tier default) <input id="edit-limit" class="narrow" type="number" min="1" step="1"></label>
        <button class="primary" type="submit">Save</button>
        <button id="rotate-current" type="button">Rotate…</button>
        <button id="edit-cancel" type="button">Cancel</button>
      </form>
    </section>

    <section class="card">
      <h2>Cluster <span id="status-updated" class="muted small"></span></h2>
      <p id="status-error" class="error"></p>
      <h3>Workers</h3>
      <div id="workers"></div>
      <h3>Browser sessions</h3>
      <div id="sessions"></div>
      <h3>Animation jobs <span class="muted small">(the newest 50, every key)</span></h3>
      <div id="jobs"></div>
    </section>
  </div>
</main>
<script nonce="${n}">${script}</script>
</body>
</html>
`;
}
