/* global document, window, navigator, sessionStorage, fetch, setInterval, clearInterval, FormData, URLSearchParams */
// The admin dashboard (GET /admin). It holds no data: it asks for the admin token, keeps it in
// this tab's sessionStorage only, and sends it on its own calls to /admin/api. The page is drawn
// with lit-html templates from the state below: every value lands in the page as text or as a
// property, never parsed as HTML. A new key's secret lives in memory until "Done", sign-out or a
// reload: it is shown once.
import { html, nothing, render } from './lit-html.js';
import { amount, bucketLabel, drawUsageChart, usageSeries } from './usage-charts.js';

const TOKEN_KEY = 'switchboard.adminToken';
const STATUS_EVERY_MS = 5000;
const LIMIT_HELP = 'The rate limit must be a whole number of at least 1, or empty for the tier default.';
const QUOTA_HELP = 'needs a limit (a number), or choose "no quota".';
/** The usage card's time ranges: the last `count` buckets, the current one included. */
const RANGES = {
  '24h': { label: 'last 24 hours, hourly', bucket: 'hour', count: 24 },
  '7d': { label: 'last 7 days, daily', bucket: 'day', count: 7 },
  '30d': { label: 'last 30 days, daily', bucket: 'day', count: 30 },
  '90d': { label: 'last 90 days, daily', bucket: 'day', count: 90 },
};

const state = {
  token: null,
  signedIn: false,
  signInError: '',
  /** { text, kind: 'error' | 'info' } */
  notice: null,
  /** { title, key, copyLabel }: a secret just created or rotated. */
  secret: null,
  keys: [],
  /** A copy of the key being edited, taken when "Edit" was clicked. */
  editing: null,
  /** The last GET /admin/api/status answer. */
  status: null,
  statusError: '',
  statusUpdated: '',
  /** The tier names in rank order, read from the gateway's own OpenAPI document (one definition). */
  tiers: [],
  /** The meter names in catalogue order, from the same document. */
  meters: [],
  /** The create form's quota rows: [{ meter, mode: 'limit' | 'none', limit, period }]. */
  newQuotas: [],
  /**
   * The usage card of one key: { keyId, range, loading, error, seq, times, meters, bucket,
   * charts: [{ meter, element, plot }] } (see usage-charts.js for times and meters).
   */
  usage: null,
  /** Per key id, its quotas in force and what is left: { data, error } (GET …/keys/{id}/quotas). */
  quotaStatus: new Map(),
  /** Per key id, its webhook endpoints with their recent deliveries: { data, error } (GET …/keys/{id}/webhooks). */
  webhooks: new Map(),
};
let statusTimer = null;
let statusBusy = false;
let statusAgain = false;

const root = document.getElementById('root');
function update() {
  render(view(), root);
}

// --- formatting --------------------------------------------------------------------------------
function message(error) {
  return error && error.message ? error.message : String(error);
}
function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}
/** How long ago, coarsely ("12 s", "3 min", "2 h", "4 d"): enough to spot a stuck job. */
function age(iso) {
  const t = iso ? new Date(iso).getTime() : NaN;
  if (Number.isNaN(t)) return '—';
  const s = Math.max(0, Math.floor((Date.now() - t) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}
function tone(status) {
  if (['SERVING', 'active', 'running', 'succeeded'].includes(status)) return 's-ok';
  if (['NOT_SERVING', 'queued', 'pending'].includes(status)) return 's-warn';
  if (['UNREACHABLE', 'failed'].includes(status)) return 's-bad';
  return 's-idle';
}
function parseAllowlist(text) {
  return String(text)
    .split(/[\s,]+/)
    .filter(Boolean);
}
/** '' = no override (null); otherwise a positive whole number, or undefined when invalid. */
function parseLimit(text) {
  const value = String(text).trim();
  if (value === '') return null;
  return /^[0-9]+$/.test(value) && Number(value) >= 1 ? Number(value) : undefined;
}

// --- the admin API -----------------------------------------------------------------------------
async function api(method, path, body) {
  const init = { method, headers: { authorization: `Bearer ${state.token}`, accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (error) {
    throw new Error(`Network error: ${message(error)}`);
  }
  if (res.status === 204) return null;
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const info = data && data.error ? data.error : {};
    const error = new Error(info.message || `HTTP ${res.status}`);
    error.status = res.status;
    error.code = info.code;
    throw error;
  }
  return data;
}

function notice(text, kind = 'error') {
  state.notice = text ? { text, kind } : null;
  update();
}
function failed(error) {
  if (error && error.status === 401) signOut(`The admin token was refused: ${message(error)}`);
  else notice(message(error));
}

// --- sign-in -----------------------------------------------------------------------------------
/** The tier and meter names, from the gateway's OpenAPI document: the page keeps no list of its own. */
async function loadCatalogue() {
  try {
    const res = await fetch('/openapi.json');
    const schemas = (await res.json()).components.schemas;
    state.tiers = schemas.Tier.enum;
    state.meters = schemas.Meter.enum;
  } catch {
    state.notice = {
      text: 'Could not read the tier and meter names from /openapi.json; reload the page.',
      kind: 'error',
    };
  }
  update();
}

async function signIn(value) {
  state.token = value;
  state.signInError = '';
  try {
    const body = await api('GET', '/admin/api/keys');
    try {
      sessionStorage.setItem(TOKEN_KEY, value);
    } catch {
      // Storage disabled: the token stays in memory for this page only.
    }
    state.signedIn = true;
    showKeys(body);
    void refreshStatus();
    if (statusTimer === null) statusTimer = setInterval(refreshStatus, STATUS_EVERY_MS);
  } catch (error) {
    if (error && error.status === 401) signOut('The admin token was refused.');
    else {
      state.token = null;
      state.signInError = message(error);
      update();
    }
  }
}
function signOut(why) {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // Nothing stored.
  }
  if (statusTimer !== null) clearInterval(statusTimer);
  statusTimer = null;
  if (state.usage) destroyCharts(state.usage);
  state.quotaStatus.clear();
  state.webhooks.clear();
  Object.assign(state, {
    token: null,
    signedIn: false,
    signInError: why || '',
    notice: null,
    secret: null,
    keys: [],
    editing: null,
    status: null,
    statusError: '',
    statusUpdated: '',
    newQuotas: [],
    usage: null,
  });
  update();
}
function onSignIn(event) {
  event.preventDefault();
  const value = String(new FormData(event.currentTarget).get('token') || '').trim();
  if (value) void signIn(value);
}

// --- keys --------------------------------------------------------------------------------------
function showKeys(body) {
  state.keys = (body && body.data) || [];
  update();
}
async function loadKeys() {
  try {
    showKeys(await api('GET', '/admin/api/keys'));
  } catch (error) {
    failed(error);
  }
}
function keyName(id) {
  const key = state.keys.find((k) => k.id === id);
  return key ? key.name : id;
}
function showSecret(title, key) {
  state.secret = { title, key, copyLabel: 'Copy' };
  update();
}
function hideSecret() {
  state.secret = null;
  update();
}
async function copySecret(event) {
  const secret = state.secret;
  if (!secret) return;
  const input = event.currentTarget.parentElement.querySelector('input');
  const label = (text) => {
    if (state.secret === secret) secret.copyLabel = text;
    update();
  };
  try {
    await navigator.clipboard.writeText(secret.key);
    label('Copied');
  } catch {
    // No clipboard API (plain http on another host) or no permission: the old way.
    input.select();
    let copied = false;
    try {
      copied = document.execCommand('copy');
    } catch {
      copied = false;
    }
    label(copied ? 'Copied' : 'Select and copy by hand');
  }
}

async function createKey(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const fields = new FormData(form);
  const limit = parseLimit(fields.get('rate_limit_per_minute'));
  if (limit === undefined) return notice(LIMIT_HELP);
  const quotas = quotasFromRows(state.newQuotas);
  if (quotas === undefined) return;
  const body = { name: String(fields.get('name')).trim(), tier: fields.get('tier') };
  const allow = parseAllowlist(fields.get('ip_allowlist'));
  if (allow.length) body.ip_allowlist = allow;
  if (limit !== null) body.rate_limit_per_minute = limit;
  if (Object.keys(quotas).length) body.quotas = quotas;
  try {
    const created = await api('POST', '/admin/api/keys', body);
    state.notice = null;
    form.reset();
    state.newQuotas = [];
    showSecret(`New API key for "${created.name}" (${created.tier})`, created.key);
    await loadKeys();
  } catch (error) {
    failed(error);
  }
}

function startEdit(key) {
  // A fresh form for every "Edit", filled from the key as it is now.
  state.editing = null;
  update();
  state.editing = { ...key, quotaRows: quotaRows(key.quotas) };
  update();
  const card = document.getElementById('edit-card');
  if (card) card.scrollIntoView();
  void loadQuotaStatus(key.id);
  void loadWebhooks(key.id);
}
function cancelEdit() {
  state.editing = null;
  update();
}
async function saveEdit(event) {
  event.preventDefault();
  const editing = state.editing;
  if (!editing) return;
  const fields = new FormData(event.currentTarget);
  const limit = parseLimit(fields.get('rate_limit_per_minute'));
  if (limit === undefined) return notice(LIMIT_HELP);
  const quotas = quotasFromRows(editing.quotaRows);
  if (quotas === undefined) return;
  const patch = {
    name: String(fields.get('name')).trim(),
    tier: fields.get('tier'),
    ip_allowlist: parseAllowlist(fields.get('ip_allowlist')),
    rate_limit_per_minute: limit,
    // The key's whole set of quotas: the rows left out go back to the tier's.
    quotas,
  };
  try {
    const key = await api('PATCH', `/admin/api/keys/${encodeURIComponent(editing.id)}`, patch);
    state.editing = null;
    notice(`Saved "${key.name}".`, 'info');
    await Promise.all([loadKeys(), loadQuotaStatus(key.id)]);
  } catch (error) {
    failed(error);
  }
}

async function rotate(id) {
  const name = keyName(id);
  const answer = window.prompt(`Rotate "${name}". Seconds the old key keeps working (0–86400):`, '0');
  if (answer === null) return;
  const text = String(answer).trim();
  const grace = text === '' ? 0 : Number(text);
  if (!/^[0-9]*$/.test(text) || grace > 86400) {
    return notice('The grace period must be a whole number of seconds from 0 to 86400.');
  }
  try {
    const rotated = await api('POST', `/admin/api/keys/${encodeURIComponent(id)}/rotate`, {
      grace_seconds: grace,
    });
    state.notice = null;
    const more = grace ? ` (the old key works for ${grace} s more)` : '';
    showSecret(`Rotated key for "${name}"${more}`, rotated.key);
    await loadKeys();
  } catch (error) {
    failed(error);
  }
}

async function revoke(id) {
  const name = keyName(id);
  const question = `Revoke "${name}" (${id})? It is refused everywhere within seconds; this cannot be undone.`;
  if (!window.confirm(question)) return;
  try {
    await api('DELETE', `/admin/api/keys/${encodeURIComponent(id)}`);
    if (state.editing && state.editing.id === id) state.editing = null;
    notice(`Revoked "${name}".`, 'info');
    await loadKeys();
  } catch (error) {
    failed(error);
  }
}

// --- quotas ------------------------------------------------------------------------------------
function meterRank(meter) {
  const at = state.meters.indexOf(meter);
  return at === -1 ? state.meters.length : at;
}
/** A key's own quotas as editable rows, in catalogue order. */
function quotaRows(quotas) {
  return Object.entries(quotas || {})
    .sort(([a], [b]) => meterRank(a) - meterRank(b))
    .map(([meter, quota]) =>
      quota === null
        ? { meter, mode: 'none', limit: '', period: 'day' }
        : { meter, mode: 'limit', limit: String(quota.limit), period: quota.period },
    );
}
/**
 * The key's own `quotas` object from its rows; undefined (with a notice) when a row cannot be sent.
 * What a limit may be is the API's to say (its refusal is shown like any other).
 */
function quotasFromRows(rows) {
  const entries = [];
  for (const row of rows) {
    if (entries.some(([meter]) => meter === row.meter)) {
      notice(`${row.meter} has two quota rows: keep one.`);
      return undefined;
    }
    if (row.mode === 'none') {
      entries.push([row.meter, null]);
      continue;
    }
    const text = String(row.limit).trim();
    const limit = Number(text);
    if (text === '' || !Number.isFinite(limit)) {
      notice(`The ${row.meter} quota ${QUOTA_HELP}`);
      return undefined;
    }
    entries.push([row.meter, { limit, period: row.period }]);
  }
  return Object.fromEntries(entries);
}
function addQuotaRow(rows) {
  const taken = new Set(rows.map((row) => row.meter));
  const meter = state.meters.find((m) => !taken.has(m)) ?? state.meters[0];
  rows.push({ meter, mode: 'limit', limit: '', period: 'day' });
  update();
}
function removeQuotaRow(rows, row) {
  // Drawn again from scratch: a select the person changed keeps its choice across a re-render.
  const kept = rows.filter((r) => r !== row);
  rows.length = 0;
  update();
  rows.push(...kept);
  update();
}
function setQuotaField(row, field, value) {
  row[field] = value;
  update();
}

async function loadQuotaStatus(id) {
  try {
    const body = await api('GET', `/admin/api/keys/${encodeURIComponent(id)}/quotas`);
    state.quotaStatus.set(id, { data: (body && body.data) || [], error: '' });
  } catch (error) {
    if (error && error.status === 401) return failed(error);
    state.quotaStatus.set(id, { data: [], error: `Quotas unavailable: ${message(error)}` });
  }
  update();
}

// --- webhooks ----------------------------------------------------------------------------------
async function loadWebhooks(id) {
  try {
    const body = await api('GET', `/admin/api/keys/${encodeURIComponent(id)}/webhooks`);
    state.webhooks.set(id, { data: (body && body.data) || [], error: '' });
  } catch (error) {
    if (error && error.status === 401) return failed(error);
    state.webhooks.set(id, { data: [], error: `Webhooks unavailable: ${message(error)}` });
  }
  update();
}

// --- usage -------------------------------------------------------------------------------------
/** The range's query: whole UTC buckets, the oldest `count - 1` before the current one. */
function rangeQuery(range, now = new Date()) {
  const { bucket, count } = RANGES[range];
  const step = bucket === 'hour' ? 3_600_000 : 86_400_000;
  const current = Math.floor(now.getTime() / step) * step;
  return {
    start: new Date(current - (count - 1) * step).toISOString(),
    end: now.toISOString(),
    bucket,
  };
}

function destroyCharts(usage) {
  for (const chart of usage.charts) chart.plot?.destroy();
  usage.charts = [];
}

async function openUsage(key) {
  if (state.usage) destroyCharts(state.usage);
  state.usage = {
    keyId: key.id,
    range: state.usage ? state.usage.range : '7d',
    loading: true,
    error: '',
    seq: 0,
    times: [],
    meters: [],
    bucket: 'day',
    charts: [],
  };
  update();
  const card = document.getElementById('usage-card');
  if (card) card.scrollIntoView();
  await Promise.all([loadUsage(), loadQuotaStatus(key.id)]);
}
function closeUsage() {
  if (state.usage) destroyCharts(state.usage);
  state.usage = null;
  update();
}
function chooseRange(event) {
  if (!state.usage) return;
  state.usage.range = event.currentTarget.value;
  void loadUsage();
}

async function loadUsage() {
  const usage = state.usage;
  if (!usage) return;
  const seq = ++usage.seq;
  const { start, end, bucket } = rangeQuery(usage.range);
  const query = new URLSearchParams({
    key_id: usage.keyId,
    start,
    end,
    bucket,
    group_by: 'capability,model,meter',
  });
  usage.loading = true;
  update();
  try {
    const report = await api('GET', `/admin/api/usage?${query}`);
    // Closed, or another key or range asked for since: that answer wins.
    if (state.usage !== usage || usage.seq !== seq) return;
    showUsage(usage, report);
  } catch (error) {
    if (state.usage !== usage || usage.seq !== seq) return;
    if (error && error.status === 401) return failed(error);
    destroyCharts(usage);
    Object.assign(usage, { loading: false, error: `Usage unavailable: ${message(error)}`, meters: [] });
    update();
  }
}

/** Draws the report: the card's chart elements must be in the page before uPlot measures them. */
function showUsage(usage, report) {
  destroyCharts(usage);
  const { times, meters } = usageSeries(report, state.meters);
  Object.assign(usage, { loading: false, error: '', times, meters, bucket: report.bucket });
  usage.charts = meters.map((meter) => {
    const element = document.createElement('div');
    element.className = 'chart-plot';
    return { meter, element, plot: null };
  });
  update();
  for (const chart of usage.charts) {
    chart.plot = drawUsageChart(chart.element, times, chart.meter, report.bucket);
  }
}

function resizeCharts() {
  if (!state.usage) return;
  for (const chart of state.usage.charts) {
    if (chart.plot)
      chart.plot.setSize({ width: Math.max(320, chart.element.clientWidth), height: chart.plot.height });
  }
}

// --- cluster status ----------------------------------------------------------------------------
/** now: a change was just made, so a poll already in flight is followed by another. */
async function refreshStatus(now) {
  if (!state.signedIn) return;
  if (statusBusy) {
    if (now === true) statusAgain = true;
    return;
  }
  statusBusy = true;
  try {
    state.status = await api('GET', '/admin/api/status');
    state.statusError = '';
    state.statusUpdated = `updated ${new Date().toLocaleTimeString()}`;
    update();
  } catch (error) {
    if (error && error.status === 401) failed(error);
    else {
      state.statusError = `Status unavailable: ${message(error)}`;
      update();
    }
  } finally {
    statusBusy = false;
    if (statusAgain) {
      statusAgain = false;
      void refreshStatus();
    }
  }
}

async function cancelJob(job) {
  if (!window.confirm(`Cancel job ${job.job_id} (key ${job.key_id})? A running job stops within seconds.`))
    return;
  try {
    const canceled = await api('DELETE', `/admin/api/jobs/${encodeURIComponent(job.job_id)}`);
    notice(`Canceled job ${canceled.job_id}.`, 'info');
  } catch (error) {
    failed(error);
  }
  await refreshStatus(true);
}

async function closeSession(session) {
  const question = `Close browser session ${session.session_id} (key ${session.owner_key_id})? Its browser stops at once; the owner's next call on it is refused.`;
  if (!window.confirm(question)) return;
  try {
    const closed = await api(
      'DELETE',
      `/admin/api/browser/sessions/${encodeURIComponent(session.session_id)}`,
    );
    notice(`Closed browser session ${closed.session_id}.`, 'info');
  } catch (error) {
    failed(error);
  }
  await refreshStatus(true);
}

/**
 * Opens a view-only live view of any session in a new tab. The tab is opened at the click (a
 * window opened after the call returns would be a blocked pop-up) and sent to the link once made.
 */
async function watchSession(session) {
  const tab = window.open('about:blank', '_blank');
  if (tab) tab.opener = null;
  try {
    const link = await api(
      'POST',
      `/admin/api/browser/sessions/${encodeURIComponent(session.session_id)}/live`,
      { mode: 'view' },
    );
    if (tab) tab.location.href = link.url;
    else notice(`Live view of ${session.session_id}: ${link.url}`, 'info');
  } catch (error) {
    tab?.close();
    failed(error);
  }
}

// --- views -------------------------------------------------------------------------------------
const badge = (text, className) => html`<span class="badge ${className}">${text}</span>`;

function table(headings, rows) {
  return html`<table>
    <thead>
      <tr>
        ${headings.map((h) => html`<th>${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${
        rows.length
          ? rows
          : html`<tr>
              <td class="muted" colspan=${headings.length}>None.</td>
            </tr>`
      }
    </tbody>
  </table>`;
}
const unavailable = (text) => html`<p class="muted">${badge('unavailable', 's-bad')} ${text}</p>`;

function tierSelect(selected) {
  return html`<select name="tier">
    ${state.tiers.map((t) => html`<option value=${t} ?selected=${t === selected}>${t}</option>`)}
  </select>`;
}

function loginView() {
  return html`<section class="card">
    <h2>Sign in</h2>
    <form class="row" autocomplete="off" @submit=${onSignIn}>
      <label
        >Admin token <input name="token" class="wide" type="password" autocomplete="off" required
      /></label>
      <button class="primary" type="submit">Sign in</button>
    </form>
    <p class="muted small">
      The token stays in this tab (sessionStorage) and is sent only to this gateway's /admin/api.
    </p>
    <p class="error" role="alert">${state.signInError}</p>
  </section>`;
}

function secretView(secret) {
  return html`<section class="card secret">
    <h2>${secret.title}</h2>
    <p class="warn">Copy it now: it will not be shown again.</p>
    <div class="row">
      <input type="text" readonly aria-label="API key" .value=${secret.key} />
      <button type="button" @click=${copySecret}>${secret.copyLabel}</button>
      <button type="button" @click=${hideSecret}>Done</button>
    </div>
  </section>`;
}

/** A key's own quotas in a few words; the tier's apply where it has none. */
function ownQuotas(key) {
  const rows = quotaRows(key.quotas);
  if (!rows.length) return html`<span class="muted">tier's</span>`;
  return rows.map(
    (row) =>
      html`<div class="small">
        ${row.mode === 'none' ? `${row.meter}: none` : `${row.meter} ${amount(Number(row.limit))} / ${row.period}`}
      </div>`,
  );
}

function keyRow(key) {
  const active = key.status === 'active';
  const allow = key.ip_allowlist && key.ip_allowlist.length ? key.ip_allowlist.join(', ') : 'everyone';
  const limit = key.rate_limit_per_minute == null ? 'tier default' : String(key.rate_limit_per_minute);
  return html`<tr>
    <td>
      <div>${key.name}</div>
      <div class="muted small mono">${key.id}</div>
    </td>
    <td><code>${key.prefix || ''}</code></td>
    <td>${key.tier}</td>
    <td class=${allow === 'everyone' ? 'muted' : 'mono small'}>${allow}</td>
    <td>${limit}</td>
    <td>${ownQuotas(key)}</td>
    <td class="small">${when(key.created_at)}</td>
    <td class="small">${key.last_used_at ? when(key.last_used_at) : 'never'}</td>
    <td>${badge(key.status, active ? 's-ok' : 's-bad')}</td>
    <td class="actions">
      <button type="button" @click=${() => openUsage(key)}>Usage</button>
      <button type="button" ?disabled=${!active} @click=${() => startEdit(key)}>Edit</button>
      <button type="button" ?disabled=${!active} @click=${() => rotate(key.id)}>Rotate</button>
      <button type="button" class="danger" ?disabled=${!active} @click=${() => revoke(key.id)}>Revoke</button>
    </td>
  </tr>`;
}

function keysView() {
  return html`<section class="card">
    <h2>API keys</h2>
    <form class="row" autocomplete="off" @submit=${createKey}>
      <label>Name <input name="name" type="text" required maxlength="100" /></label>
      <label>Tier ${tierSelect('basic')}</label>
      <label
        >IP allowlist (CIDRs, comma-separated; empty = everyone)
        <input name="ip_allowlist" class="wide" type="text"
      /></label>
      <label
        >Requests / minute (empty = tier default)
        <input name="rate_limit_per_minute" class="narrow" type="number" min="1" step="1"
      /></label>
      ${quotaEditor(state.newQuotas)}
      <button class="primary" type="submit">Create key</button>
      <button type="button" @click=${loadKeys}>Refresh</button>
    </form>
    <h3>Keys</h3>
    <table>
      <thead>
        <tr>
          <th>name / id</th>
          <th>prefix</th>
          <th>tier</th>
          <th>IP allowlist</th>
          <th>limit / min</th>
          <th>own quotas</th>
          <th>created</th>
          <th>last used</th>
          <th>status</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${
          state.keys.length
            ? state.keys.map(keyRow)
            : html`<tr>
                <td class="muted" colspan="10">No keys yet.</td>
              </tr>`
        }
      </tbody>
    </table>
  </section>`;
}

function editView(key) {
  const limit = key.rate_limit_per_minute == null ? '' : String(key.rate_limit_per_minute);
  return html`<section id="edit-card" class="card">
    <h2>Edit key <code>${key.id}</code></h2>
    <form class="row" autocomplete="off" @submit=${saveEdit}>
      <label>Name <input name="name" type="text" required maxlength="100" .value=${key.name} /></label>
      <label>Tier ${tierSelect(key.tier)}</label>
      <label
        >IP allowlist (CIDRs; empty = everyone)
        <input name="ip_allowlist" class="wide" type="text" .value=${(key.ip_allowlist || []).join(', ')}
      /></label>
      <label
        >Requests / minute (empty = tier default)
        <input name="rate_limit_per_minute" class="narrow" type="number" min="1" step="1" .value=${limit}
      /></label>
      ${quotaEditor(key.quotaRows)}
      <button class="primary" type="submit">Save</button>
      <button type="button" @click=${() => rotate(key.id)}>Rotate…</button>
      <button type="button" @click=${cancelEdit}>Cancel</button>
    </form>
    <h3>Quotas in force <span class="muted small">(as saved)</span></h3>
    ${quotaStatusView(key.id)}
    <h3>
      Webhooks
      <button type="button" @click=${() => loadWebhooks(key.id)}>Reload webhooks</button>
    </h3>
    ${webhooksView(key.id)}
  </section>`;
}

/** The key's endpoints (never a secret: the API shows none) and each one's latest deliveries. */
function webhooksView(keyId) {
  const webhooks = state.webhooks.get(keyId);
  if (!webhooks) return html`<p class="muted">Loading…</p>`;
  if (webhooks.error) return unavailable(webhooks.error);
  if (!webhooks.data.length) return html`<p class="muted">No webhook endpoints.</p>`;
  return webhooks.data.map(
    (endpoint) =>
      html`<div class="webhook" data-endpoint=${endpoint.id}>
        <p>
          ${badge(endpoint.status, endpoint.status === 'enabled' ? 's-ok' : 's-bad')}
          ${endpoint.disabled_reason ? html`<span class="muted small">(${endpoint.disabled_reason})</span>` : nothing}
          <code>${endpoint.url}</code> <span class="muted small">${endpoint.events.join(', ')}</span>
          ${endpoint.description ? html`<span class="small">— ${endpoint.description}</span>` : nothing}
        </p>
        ${table(
          ['delivery', 'event', 'status', 'attempts', 'response', 'error', 'created', 'next attempt'],
          endpoint.recent_deliveries.map(
            (d) =>
              html`<tr class="delivery" data-status=${d.status}>
                <td class="mono small">${d.id}</td>
                <td>${d.type}</td>
                <td>${badge(d.status, tone(d.status))}</td>
                <td>${d.attempts}</td>
                <td>${d.response_status == null ? '—' : `${d.response_status} in ${d.response_ms} ms`}</td>
                <td class="small">${d.error || '—'}</td>
                <td class="small">${when(d.created_at)}</td>
                <td class="small">${d.next_attempt_at ? when(d.next_attempt_at) : '—'}</td>
              </tr>`,
          ),
        )}
      </div>`,
  );
}

/** Rows of a key's own quotas, edited in place; the form that holds them sends them. */
function quotaEditor(rows) {
  return html`<fieldset class="quotas">
    <legend>
      Quotas of this key: each replaces the tier's for its meter; the other meters follow the tier.
    </legend>
    ${
      rows.length
        ? html`<table class="quota-editor">
            <tbody>
              ${rows.map((row) => quotaRowView(rows, row))}
            </tbody>
          </table>`
        : html`<p class="muted small">None: the tier's quotas apply.</p>`
    }
    <button type="button" ?disabled=${!state.meters.length} @click=${() => addQuotaRow(rows)}>
      Add quota
    </button>
  </fieldset>`;
}

function quotaRowView(rows, row) {
  const none = row.mode === 'none';
  return html`<tr class="quota-row">
    <td>
      <select aria-label="Quota meter" @change=${(e) => setQuotaField(row, 'meter', e.currentTarget.value)}>
        ${state.meters.map((m) => html`<option value=${m} ?selected=${m === row.meter}>${m}</option>`)}
      </select>
    </td>
    <td>
      <select aria-label="Quota kind" @change=${(e) => setQuotaField(row, 'mode', e.currentTarget.value)}>
        <option value="limit" ?selected=${!none}>limit</option>
        <option value="none" ?selected=${none}>no quota (lifts the tier's)</option>
      </select>
    </td>
    <td>
      <input
        aria-label="Quota limit"
        class="narrow"
        type="number"
        step="any"
        ?disabled=${none}
        .value=${row.limit}
        @input=${(e) => {
          row.limit = e.currentTarget.value;
        }}
      />
    </td>
    <td>
      <select
        aria-label="Quota period"
        ?disabled=${none}
        @change=${(e) => setQuotaField(row, 'period', e.currentTarget.value)}
      >
        <option value="day" ?selected=${row.period === 'day'}>per UTC day</option>
        <option value="month" ?selected=${row.period === 'month'}>per UTC month</option>
      </select>
    </td>
    <td><button type="button" @click=${() => removeQuotaRow(rows, row)}>Reset to tier</button></td>
  </tr>`;
}

/** The quotas that bind a key now, with what is used, held by calls in flight, and left. */
function quotaStatusView(keyId) {
  const status = state.quotaStatus.get(keyId);
  if (!status) return html`<p class="muted">Loading…</p>`;
  if (status.error) return unavailable(status.error);
  return table(
    ['meter', 'source', 'period', 'limit', 'used', 'reserved', 'left', '', 'resets'],
    status.data.map(quotaStatusRow),
  );
}

function quotaStatusRow(quota) {
  const spent = quota.used + quota.reserved;
  // A zero limit is spent from the start: the bar is full.
  const max = quota.limit > 0 ? quota.limit : 1;
  const value = quota.limit > 0 ? Math.min(spent, max) : 1;
  const figure = (field) =>
    html`<td class=${field} data-value=${String(quota[field])}>${amount(quota[field])}</td>`;
  return html`<tr class="quota" data-meter=${quota.meter}>
    <td>${quota.meter}</td>
    <td>${badge(quota.source, quota.source === 'key' ? 's-warn' : 's-idle')}</td>
    <td>${quota.period}</td>
    ${figure('limit')} ${figure('used')} ${figure('reserved')} ${figure('remaining')}
    <td>
      <meter
        aria-label=${`${quota.meter}: used of the limit`}
        min="0"
        max=${String(max)}
        high=${String(max * 0.8)}
        optimum="0"
        .value=${value}
      ></meter>
    </td>
    <td class="small">${when(quota.period_end)}</td>
  </tr>`;
}

function usageView(usage) {
  const key = state.keys.find((k) => k.id === usage.keyId);
  return html`<section id="usage-card" class="card">
    <h2>
      Usage of ${key ? html`"${key.name}"` : nothing} <code>${usage.keyId}</code>
      <button type="button" @click=${closeUsage}>Close usage</button>
    </h2>
    <div class="row">
      <label
        >Range
        <select name="range" @change=${chooseRange}>
          ${Object.entries(RANGES).map(
            ([value, range]) =>
              html`<option value=${value} ?selected=${value === usage.range}>${range.label}</option>`,
          )}
        </select></label
      >
      <button type="button" @click=${() => Promise.all([loadUsage(), loadQuotaStatus(usage.keyId)])}>
        Reload usage
      </button>
      <span class="muted small">${usage.loading ? 'Loading…' : 'Buckets in UTC.'}</span>
    </div>
    <h3>Quotas</h3>
    ${quotaStatusView(usage.keyId)}
    <h3>Totals</h3>
    ${usage.error ? unavailable(usage.error) : usageTotals(usage)}
    <h3>Over time</h3>
    ${
      usage.charts.length
        ? usage.charts.map((chart) => chartView(usage, chart))
        : html`<p class="muted">${usage.loading ? 'Loading…' : 'No usage in this range.'}</p>`
    }
  </section>`;
}

function usageTotals(usage) {
  return table(
    ['meter', 'capability', 'model', 'total'],
    usage.meters.flatMap((meter) =>
      meter.series.map(
        (series) =>
          html`<tr class="usage-total" data-meter=${meter.meter}>
            <td>${meter.meter}</td>
            <td>${series.capability}</td>
            <td>${series.model || '—'}</td>
            <td class="total" data-value=${String(series.total)}>${amount(series.total)}</td>
          </tr>`,
      ),
    ),
  );
}

/** A meter's chart, and the same numbers as a table for those who cannot see it. */
function chartView(usage, chart) {
  return html`<figure class="chart" data-meter=${chart.meter.meter}>
    <figcaption>
      ${chart.meter.meter} <span class="muted small">total ${amount(chart.meter.total)}</span>
    </figcaption>
    ${chart.element}
    <details>
      <summary>Values</summary>
      ${table(
        ['bucket', ...chart.meter.series.map((series) => series.label)],
        usage.times.map(
          (ts, index) =>
            html`<tr class="bucket">
              <td class="mono small">${bucketLabel(usage.bucket, ts)}</td>
              ${chart.meter.series.map(
                (series) =>
                  html`<td data-value=${String(series.values[index])}>${amount(series.values[index])}</td>`,
              )}
            </tr>`,
        ),
      )}
    </details>
  </figure>`;
}

// Each worker's row, then one row per replica it resolves to (llm, whisper, diffusion; browser and
// animation list none): its health and the calls this gateway has open to it and has sent it.
function workersView(workers) {
  return table(
    ['worker', 'address', 'health', 'in flight', 'served'],
    workers.flatMap((w) => [
      html`<tr>
        <td>${w.name}</td>
        <td class="mono small">${w.address}</td>
        <td>${badge(w.status, tone(w.status))}</td>
        <td class="small">${count(w.replicas, 'in_flight')}</td>
        <td class="small">${count(w.replicas, 'served')}</td>
      </tr>`,
      ...(w.replicas || []).map(
        (r) =>
          html`<tr class="replica" data-worker=${w.name}>
            <td class="muted small">replica</td>
            <td class="mono small">${r.address}</td>
            <td>${badge(r.status, tone(r.status))}</td>
            <td class="small">${String(r.in_flight)}</td>
            <td class="small">${String(r.served)}</td>
          </tr>`,
      ),
    ]),
  );
}

/** A worker's total over its replicas; a dash for one that lists none. */
function count(replicas, field) {
  if (!Array.isArray(replicas) || replicas.length === 0) return '—';
  return String(replicas.reduce((sum, r) => sum + r[field], 0));
}

function sessionsView(sessions) {
  if (!Array.isArray(sessions)) return unavailable('The browser worker cannot be reached.');
  return table(
    ['session', 'status', 'current URL', 'owner key', 'created', ''],
    sessions.map(
      (s) =>
        html`<tr>
          <td class="mono small">${s.session_id}</td>
          <td>${badge(s.status, tone(s.status))}</td>
          <td class="small">${s.current_url || '—'}</td>
          <td class="mono small">${s.owner_key_id}</td>
          <td class="small">${when(s.created_at)}</td>
          <td class="actions">
            ${
              s.status === 'active'
                ? html`<button type="button" @click=${() => watchSession(s)}>Live view</button>
                    <button type="button" class="danger" @click=${() => closeSession(s)}>Close</button>`
                : nothing
            }
          </td>
        </tr>`,
    ),
  );
}

function jobRow(j) {
  const fraction = Math.min(1, Math.max(0, Number(j.progress) || 0));
  return html`<tr>
    <td class="mono small">${j.job_id}</td>
    <td class="mono small">${j.key_id}</td>
    <td>${j.backend}</td>
    <td>${badge(j.status, tone(j.status))}</td>
    <td class="small"><progress max="1" .value=${fraction}></progress> ${Math.round(fraction * 100)}%</td>
    <td class="small" title=${when(j.created_at)}>${age(j.created_at)}</td>
    <td class="small">${String(j.attempts)}</td>
    <td class="actions">
      ${
        j.status === 'queued' || j.status === 'running'
          ? html`<button type="button" class="danger" @click=${() => cancelJob(j)}>Cancel</button>`
          : nothing
      }
    </td>
  </tr>`;
}

function jobsView(jobs) {
  if (!Array.isArray(jobs)) return unavailable('The job store cannot be read.');
  return table(
    ['job', 'owner key', 'backend', 'status', 'progress', 'age', 'attempts', ''],
    jobs.map(jobRow),
  );
}

function clusterView() {
  const status = state.status;
  const loading = html`<p class="muted">Loading…</p>`;
  return html`<section class="card">
    <h2>
      Cluster <span class="muted small">${state.statusUpdated}</span>
      <button type="button" @click=${() => refreshStatus(true)}>Refresh</button>
    </h2>
    <p class="error">${state.statusError}</p>
    <h3>Workers</h3>
    ${status ? workersView(status.workers || []) : loading}
    <h3>Browser sessions</h3>
    ${status ? sessionsView(status.browser_sessions) : loading}
    <h3>Animation jobs <span class="muted small">(the newest 50, every key)</span></h3>
    ${status ? jobsView(status.animation_jobs) : loading}
  </section>`;
}

function view() {
  return html`<header class="top">
      <h1>Switchboard admin</h1>
      ${state.signedIn ? html`<button type="button" @click=${() => signOut('')}>Sign out</button>` : nothing}
    </header>
    <main>
      ${
        state.signedIn
          ? html`${
              state.notice
                ? html`<div class="notice ${state.notice.kind}" role="status">${state.notice.text}</div>`
                : nothing
            }
            ${state.secret ? secretView(state.secret) : nothing} ${keysView()}
            ${state.editing ? editView(state.editing) : nothing}
            ${state.usage ? usageView(state.usage) : nothing} ${clusterView()}`
          : loginView()
      }
    </main>`;
}

// --- start -------------------------------------------------------------------------------------
root.replaceChildren();
update();
let saved = null;
try {
  saved = sessionStorage.getItem(TOKEN_KEY);
} catch {
  saved = null;
}
if (saved) void signIn(saved);
void loadCatalogue();
window.addEventListener('resize', resizeCharts);
