'use strict';
/*
 * thermlog dashboard: plain JavaScript over the JSON API (/api/v1/...). The views share one
 * time window (a run's page shows its own span), resolved to absolute unix seconds when it is chosen, so every request of a view
 * (and the CSV links) covers exactly the same span.
 */
(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children) {
      if (c !== undefined && c !== null && c !== false) e.append(c);
    }
    return e;
  };

  const WINDOWS = { '1h': 3600, '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400 };
  const GROUPS = [
    ['thermal', 'Thermal zones'],
    ['cpufreq', 'CPU clusters'],
    ['devfreq', 'Devfreq devices (NPU, GPU, memory)'],
    ['iio', 'IIO channels and thermocouples'],
    ['hwmon', 'hwmon sensors'],
    ['cooling', 'Cooling devices'],
    ['load', 'Load (CPUs, NPU cores, devfreq devices)'],
    ['import', 'Imported channels'],
  ];
  const HOURS_PER_YEAR = 8760;
  const SPARK_POINTS = 48;
  const SPARK_BUDGET = 40000; // bytes of /api/v1/samples for the overview's sparklines
  const CHART_POINTS = 480;

  const SERIES_KEY = 'thermlog.series';

  const state = {
    view: 'overview',
    win: null, // {from, to, label} in unix seconds
    channels: [], // from /api/v1/channels
    status: null,
    loaded: {}, // view -> window key it was last loaded for
    refreshTimer: 0,
    retryTimer: 0,
    charts: {},
    series: loadSeriesChoice(), // channel key -> shown, for the series the user chose
    campaign: campaignFromUrl(), // the Runs view's campaign id (?campaign=ID), or ''
  };
  window.thermlogCharts = state.charts; // the browser test reads the charts' visibility

  /* ---------- the chart's series choice, kept in localStorage ---------- */

  function loadSeriesChoice() {
    try {
      const v = JSON.parse(localStorage.getItem(SERIES_KEY) || '{}');
      return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
    } catch (e) {
      return {}; // storage disabled or garbage: the default set
    }
  }

  function saveSeriesChoice() {
    try {
      localStorage.setItem(SERIES_KEY, JSON.stringify(state.series));
    } catch (e) {
      // storage disabled: the choice lasts until the page is closed
    }
  }

  /* Sixteen lines are spaghetti: by default the zones and the CPU and NPU clocks. */
  function shownByDefault(key) {
    return /^(thermal|cpufreq)\//.test(key) || /^devfreq\/.*npu/i.test(key);
  }

  const seriesShown = (key) => (Object.prototype.hasOwnProperty.call(state.series, key) ? state.series[key] === true : shownByDefault(key));

  /* ---------- API ---------- */

  class ApiError extends Error {
    constructor(message, status, body) {
      super(message);
      this.status = status;
      this.body = body || null;
    }
  }

  async function api(path, params) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) qs.append(k, String(item));
    }
    const url = 'api/v1/' + path + (qs.toString() ? '?' + qs : '');
    let resp;
    try {
      resp = await fetch(url, { headers: { Accept: 'application/json' } });
    } catch (e) {
      throw new ApiError('The thermlog daemon is not answering. It may be restarting; this page tries again every 10 seconds.', 0);
    }
    let body = null;
    try {
      body = await resp.json();
    } catch (e) {
      body = null;
    }
    if (!resp.ok) {
      const why = body && body.error ? body.error : resp.statusText;
      if (resp.status === 503) {
        throw new ApiError('The daemon is starting or busy: ' + why + '. Trying again shortly.', 503);
      }
      if (resp.status === 401) {
        // The session expired or the token changed: sign in again, then come back here.
        location.assign('login' + location.hash);
      }
      const human = windowTooLong(body);
      throw new ApiError(human || why + ' (HTTP ' + resp.status + ' from ' + path + ')', resp.status, body);
    }
    if (body === null) throw new ApiError('The daemon sent a response that is not JSON (' + path + ').', resp.status);
    return body;
  }

  /* Runs fn over items with at most `limit` requests in flight. */
  async function pool(items, limit, fn) {
    const out = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        try {
          out[i] = await fn(items[i], i);
        } catch (e) {
          out[i] = e;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
    return out;
  }

  const first = (obj, ...names) => {
    if (!obj) return undefined;
    for (const n of names) if (obj[n] !== undefined && obj[n] !== null) return obj[n];
    return undefined;
  };
  const asArray = (v, ...names) => (Array.isArray(v) ? v : first(v, ...names) || []);
  const parseMeta = (m) => {
    if (!m) return {};
    if (typeof m === 'string') {
      try {
        return JSON.parse(m) || {};
      } catch (e) {
        return {};
      }
    }
    return m;
  };

  /*
   * Series points as {t, min, mean, max}. The API sends {"channels": [{"key", "points":
   * [[bucket start, min, max, mean, count], ...]}]}; objects with named fields work too.
   */
  function normPoints(resp, key) {
    const chans = resp && Array.isArray(resp.channels) ? resp.channels : null;
    const src = chans ? chans.find((c) => c.key === key) || chans[0] || {} : resp;
    const raw = asArray(src, 'points', 'samples', 'data', 'series');
    const pts = [];
    for (const p of raw) {
      let t, lo, mid, hi;
      if (Array.isArray(p)) {
        t = p[0];
        if (p.length >= 4) [lo, hi, mid] = [p[1], p[2], p[3]];
        else lo = mid = hi = p[1];
      } else {
        t = first(p, 't', 'ts', 'time', 'unix');
        mid = first(p, 'mean', 'value', 'avg', 'v');
        lo = first(p, 'min');
        hi = first(p, 'max');
        if (lo === undefined) lo = mid;
        if (hi === undefined) hi = mid;
      }
      if (typeof t === 'string') t = Date.parse(t) / 1000;
      if (typeof t !== 'number' || typeof mid !== 'number') continue;
      pts.push({ t, min: lo, mean: mid, max: hi });
    }
    pts.sort((a, b) => a.t - b.t);
    return pts;
  }

  /*
   * Downsampled series of many channels: /api/v1/samples takes repeated channel parameters
   * (at most 32 parameters in all), so channels go in chunks. Returns Map(key -> points).
   */
  async function fetchSeries(chans, maxPoints) {
    const CHUNK = 16;
    const chunks = [];
    for (let i = 0; i < chans.length; i += CHUNK) chunks.push(chans.slice(i, i + CHUNK));
    const out = new Map();
    const results = await pool(chunks, 3, (chunk) =>
      api('samples', { channel: chunk.map((c) => c.key), ...winParams(), max_points: maxPoints }));
    for (const r of results) {
      if (r instanceof Error) throw r;
      for (const c of asArray(r, 'channels')) out.set(c.key, normPoints({ channels: [c] }, c.key));
    }
    return out;
  }

  /* ---------- formatting ---------- */

  const intFmt = new Intl.NumberFormat('en-US');
  const pad = (n) => String(n).padStart(2, '0');

  function fmtTime(ts, withSeconds) {
    if (typeof ts !== 'number' || !isFinite(ts)) return '–';
    const d = new Date(ts * 1000);
    const s = d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
      pad(d.getHours()) + ':' + pad(d.getMinutes());
    return withSeconds ? s + ':' + pad(d.getSeconds()) : s;
  }

  /*
   * A duration as the CLI's unit_duration() (src/base/unit.c) writes it, the same steps and the
   * same rounding (half up): "300 ms", "45 s", "8.5 s", "2 min 27 s" below 10 min (p50 91 s and
   * p95 147 s never both read "2 min"), then three figures in the largest unit that fits:
   * 1535 s and 1550 s read 25.6 and 25.8 min, never both "26 min"; "2.5 h", "6.02 days".
   * tests/fixtures/durations.txt holds the cases both are tested against.
   */
  function fmtDuration(s) {
    if (typeof s !== 'number' || !isFinite(s)) return '–';
    s = Math.abs(s);
    const halfUp = (v, places) => Math.floor(v * 10 ** places + 0.5) / 10 ** places;
    const fig3 = (v, unit) => {
      const e = Math.floor(Math.log10(v));
      const step = 10 ** (e - 2);
      const r = e <= 2 ? halfUp(v, 2 - e) : Math.floor(v / step + 0.5) * step;
      return String(r) + ' ' + unit;
    };
    if (s >= 2 * 86400) return fig3(s / 86400, 'days');
    if (s >= 2 * 3600) return fig3(s / 3600, 'h');
    if (s >= 600) return fig3(s / 60, 'min');
    if (s >= 120) {
      const r = Math.floor(s + 0.5);
      return Math.floor(r / 60) + ' min' + (r % 60 ? ' ' + (r % 60) + ' s' : '');
    }
    if (s >= 1 || s === 0) {
      const r = halfUp(s, 1);
      return (Number.isInteger(r) ? String(r) : r.toFixed(1)) + ' s';
    }
    if (s >= 0.0005) return Math.floor(s * 1000 + 0.5) + ' ms';
    return 'under 1 ms';
  }

  /* A long span in words: "400 days", "6.9 years". */
  function fmtSpan(s) {
    const d = s / 86400;
    if (d < 2) return fmtDuration(s);
    if (d < 730) return intFmt.format(Math.round(d)) + ' days';
    return (d / 365.25).toFixed(1) + ' years';
  }

  /*
   * The API refuses a window over http.max_window with its length and the limit in seconds;
   * say it in days and years, with what to do about it. Returns null for other errors.
   */
  function windowTooLong(body) {
    const m = body && typeof body.error === 'string' && body.error.match(/spans (\d+) s, more than the configured limit of (\d+) s/);
    if (!m) return null;
    return 'This range spans ' + fmtSpan(Number(m[1])) + ', longer than the ' + fmtSpan(Number(m[2])) +
      ' this daemon answers for at once (http.max_window). Choose a shorter range.';
  }

  function fmtBytes(b) {
    if (typeof b !== 'number') return '–';
    if (b < 1024) return b + ' B';
    if (b < 1048576) return (b / 1024).toFixed(1) + ' KiB';
    if (b < 1073741824) return (b / 1048576).toFixed(1) + ' MiB';
    return (b / 1073741824).toFixed(2) + ' GiB';
  }

  function fmtHz(v) {
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(2) + ' GHz';
    if (a >= 1e6) return (v / 1e6).toFixed(0) + ' MHz';
    if (a >= 1e3) return (v / 1e3).toFixed(0) + ' kHz';
    return v.toFixed(0) + ' Hz';
  }

  /* A value with its unit; `digits` is the precision for temperatures (1 in the overview). */
  function fmtValue(v, unit, digits) {
    if (typeof v !== 'number' || !isFinite(v)) return '–';
    const d = digits === undefined ? 1 : digits;
    switch (unit) {
      case 'celsius': return v.toFixed(d) + ' °C';
      case 'hertz': return fmtHz(v);
      case 'volts': return Math.abs(v) < 1 ? (v * 1000).toFixed(1) + ' mV' : v.toFixed(3) + ' V';
      case 'amperes': return Math.abs(v) < 1 ? (v * 1000).toFixed(1) + ' mA' : v.toFixed(3) + ' A';
      case 'watts': return v.toFixed(2) + ' W';
      case 'joules': return Math.abs(v) >= 1e6 ? (v / 1e6).toFixed(2) + ' MJ' :
        Math.abs(v) >= 1e3 ? (v / 1e3).toFixed(2) + ' kJ' : v.toFixed(1) + ' J';
      case 'rpm': return v.toFixed(0) + ' rpm';
      case 'percent': return v.toFixed(1) + ' %';
      // as the CLI's unit registry (src/unit.c) shows memory: MiB to 0.1
      case 'bytes': return (v / 1048576).toFixed(1) + ' MiB';
      case 'pages_per_second': return (Number.isInteger(v) ? String(v) : v.toFixed(2)) + ' pages/s';
      case 'state':
      case '':
      case undefined:
        return Number.isInteger(v) ? String(v) : v.toFixed(2);
      default: return (Number.isInteger(v) ? String(v) : v.toFixed(2)) + ' ' + unit;
    }
  }

  /* A channel's value; a cooling state reads "2 of 7" against the device's max_state. */
  function fmtChannel(v, c, digits) {
    const text = fmtValue(v, c.unit, digits);
    const max = c.meta && c.meta.max_state;
    return c.unit === 'state' && typeof max === 'number' && typeof v === 'number' && isFinite(v) ? text + ' of ' + max : text;
  }

  const fmtPercent = (f, digits) => (typeof f === 'number' && isFinite(f) ? (f * 100).toFixed(digits === undefined ? 1 : digits) + ' %' : '–');

  function fmtHours(h) {
    if (typeof h !== 'number' || !isFinite(h)) return '–';
    const y = h / HOURS_PER_YEAR;
    const years = y >= 100 ? intFmt.format(Math.round(y)) : y.toFixed(y < 10 ? 2 : 1);
    return years + ' years (' + intFmt.format(Math.round(h)) + ' h)';
  }

  /* Years in bold, hours beside them in muted text. */
  function hoursNode(h, suffix) {
    if (typeof h !== 'number' || !isFinite(h)) return '–';
    const y = h / HOURS_PER_YEAR;
    const years = y >= 100 ? intFmt.format(Math.round(y)) : y.toFixed(y < 10 ? 2 : 1);
    return el('span', {}, years + ' years', el('span', { class: 'hours', text: ' ' + intFmt.format(Math.round(h)) + ' h' + (suffix || '') }));
  }

  /* ---------- window ---------- */

  function toLocalInput(ts) {
    const d = new Date(ts * 1000);
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + 'T' +
      pad(d.getHours()) + ':' + pad(d.getMinutes());
  }

  function resolveWindow() {
    const sel = $('#window-select').value;
    const now = Math.floor(Date.now() / 1000);
    if (sel === 'custom') {
      const f = Date.parse($('#window-from').value);
      const t = Date.parse($('#window-to').value);
      if (!isFinite(f) || !isFinite(t) || t <= f) {
        return null;
      }
      return { from: Math.floor(f / 1000), to: Math.floor(t / 1000), label: 'custom' };
    }
    return { from: now - WINDOWS[sel], to: now, label: sel };
  }

  /* The window in the URL (?window=7d, or ?from=…Z&to=…Z in UTC), so a bookmark keeps it. */
  function parseUrlTime(v) {
    if (!v) return null;
    const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v);
    return isFinite(ms) ? Math.floor(ms / 1000) : null;
  }

  function windowFromUrl() {
    const q = new URLSearchParams(location.search);
    const w = q.get('window');
    if (w && WINDOWS[w]) {
      $('#window-select').value = w;
      return resolveWindow();
    }
    const from = parseUrlTime(q.get('from'));
    const to = parseUrlTime(q.get('to'));
    if (from === null || to === null || to <= from) return null;
    $('#window-select').value = 'custom';
    $('#custom-range').hidden = false;
    $('#window-from').value = toLocalInput(from);
    $('#window-to').value = toLocalInput(to);
    return { from, to, label: 'custom' };
  }

  function windowToUrl(w) {
    const iso = (t) => new Date(t * 1000).toISOString().replace(/\.000Z$/, 'Z').replace(/:00Z$/, 'Z');
    const q = new URLSearchParams(location.search);
    for (const k of ['window', 'from', 'to']) q.delete(k);
    let rest = q.toString();
    rest = rest ? '&' + rest : '';
    const win = w.label === 'custom' ? 'from=' + iso(w.from) + '&to=' + iso(w.to) : 'window=' + w.label;
    history.replaceState(null, '', '?' + win + rest + location.hash);
  }

  const winKey = () => (state.win ? state.win.from + '-' + state.win.to : '');
  const winParams = () => ({ from: state.win.from, to: state.win.to });

  function showWindow() {
    const w = state.win;
    $('#window-text').textContent = fmtTime(w.from) + ' → ' + fmtTime(w.to) + ' (' + fmtDuration(w.to - w.from) + ', local time)';
    for (const fmt of ['long', 'wide']) {
      const a = $('#csv-' + fmt);
      a.href = 'api/v1/export.csv?' + new URLSearchParams({ from: w.from, to: w.to, format: fmt });
      a.setAttribute('download', 'thermlog-' + fmt + '-' + w.from + '-' + w.to + '.csv');
    }
    // The Report buttons of the windowed views: the report of exactly this window (the
    // server names the file). The Lifetime view's reviews the whole history, as it shows.
    for (const a of document.querySelectorAll('a[data-report="window"]')) {
      a.href = 'api/v1/report?' + new URLSearchParams({ from: w.from, to: w.to });
    }
  }

  /* ---------- messages ---------- */

  function banner(text, bad) {
    const b = $('#banner');
    if (!text) {
      b.hidden = true;
      b.textContent = '';
      return;
    }
    b.hidden = false;
    b.className = 'banner' + (bad ? ' bad' : '');
    b.textContent = text;
  }

  function notice(container, text) {
    container.replaceChildren(el('p', { class: 'notice', role: 'status', text }));
  }

  /* Errors that mean "the daemon is away" retry the whole page; others stay in their panel. */
  function handleError(e, container) {
    const away = e instanceof ApiError && (e.status === 0 || e.status === 503);
    if (away) {
      banner(e.message, true);
      clearTimeout(state.retryTimer);
      state.retryTimer = setTimeout(() => {
        state.loaded = {};
        start();
      }, 10000);
    }
    if (container) notice(container, away ? 'Waiting for the daemon…' : e.message || String(e));
  }

  /* ---------- channels ---------- */

  function normChannel(c) {
    const meta = parseMeta(c.meta);
    return {
      key: c.key,
      label: c.label || c.key,
      source: c.source || String(c.key).split('/')[0],
      kind: c.kind || '',
      unit: c.unit || '',
      present: c.present !== false && c.absent !== true,
      meta,
      governor: first(meta, 'governor', 'scaling_governor') || c.governor,
    };
  }

  /* Channels in the overview's group order (thermal zones first), keys sorted inside a group. */
  function sortByGroup(list) {
    const rank = (c) => {
      const src = c.source || (channelByKey(c.key) || {}).source || String(c.key).split('/')[0];
      const i = GROUPS.findIndex(([s]) => s === src);
      return i < 0 ? GROUPS.length : i;
    };
    return list.slice().sort((a, b) => rank(a) - rank(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  const isTemp = (c) => c.unit === 'celsius' || c.kind === 'temperature';
  const isClock = (c) => c.unit === 'hertz' || c.kind === 'frequency';
  const channelByKey = (key) => state.channels.find((c) => c.key === key);

  function channelCell(c, tag) {
    const cell = el(tag || 'th', { scope: 'row' }, el('span', { text: c.label }));
    if (c.label !== c.key) cell.append(el('span', { class: 'key', text: c.key }));
    if (c.governor) cell.append(' ', el('span', { class: 'gov', text: 'governor ' + c.governor }));
    if (!c.present) cell.append(' ', el('span', { class: 'gov', text: '(absent)' }));
    return cell;
  }

  /* ---------- overview ---------- */

  function renderStatus(s) {
    const list = $('#status-list');
    const items = [];
    const now = Date.now() / 1000;
    const db = s.database && typeof s.database === 'object' ? s.database : {};
    const intervalS = first(s, 'interval_ms') !== undefined ? s.interval_ms / 1000 : first(s, 'interval_s', 'interval');
    let last = first(s, 'last_cycle_ts', 'last_cycle');
    if (typeof last === 'string') last = Date.parse(last) / 1000;
    if (typeof last === 'number' && last > 0) {
      const age = typeof s.last_cycle_age_s === 'number' ? s.last_cycle_age_s : now - last;
      const stale = intervalS && age > 3 * intervalS + 5;
      const today = fmtTime(last).slice(0, 10) === fmtTime(now).slice(0, 10);
      const when = today ? fmtTime(last, true).slice(11) : fmtTime(last, true);
      const ago = age < 1 ? 'just now' : fmtDuration(Math.round(age)) + ' ago';
      items.push(['Last cycle', when + ' (' + ago + ')', stale ? 'warn' : '']);
    } else {
      items.push(['Last cycle', 'none yet', 'warn']);
    }
    items.push(['Interval', fmtDuration(intervalS)]);
    if (typeof s.cycle_seconds === 'number' && s.cycle_seconds > 0) items.push(['Cycle takes', fmtDuration(s.cycle_seconds)]);
    // "synced", "unsynced" or "unknown" (no sync service: trusted, per the daemon's rules).
    let clock = first(s, 'clock');
    if (typeof clock !== 'string') {
      const sync = first(s, 'clock_synchronized');
      clock = sync === true ? 'synced' : sync === false ? 'unsynced' : 'unknown';
    }
    items.push(['Clock', clock === 'synced' ? 'synchronized' : clock === 'unsynced' ? 'not synchronized' : 'no sync information',
      clock === 'synced' ? 'good' : clock === 'unsynced' ? 'bad' : '']);
    const errs = first(s, 'errors_last_hour');
    // Failed channel reads, with the channels that failed (a rate's first reading is none).
    const errChannels = typeof s.error_channels === 'string' && s.error_channels ? ' (' + s.error_channels + ')' : '';
    if (errs !== undefined) items.push(['Errors (last hour)', intFmt.format(errs) + (errs > 0 ? errChannels : ''), errs > 0 ? 'warn' : 'good']);
    if (s.queued_cycles > 0) items.push(['Waiting for disk', intFmt.format(s.queued_cycles) + ' cycles', 'bad']);
    const stored = first(db, 'cycles') ?? first(s, 'cycles_stored');
    if (stored !== undefined) {
      items.push(['Cycles stored', intFmt.format(stored) + (db.unsynced_cycles ? ' (' + intFmt.format(db.unsynced_cycles) + ' unsynchronized)' : '')]);
    }
    const present = first(s, 'channels_present');
    const absent = first(s, 'channels_absent');
    if (present !== undefined) items.push(['Channels', intFmt.format(present) + ' present' + (absent ? ', ' + absent + ' absent' : ''), absent ? 'warn' : '']);
    const size = first(db, 'size_bytes') ?? first(s, 'database_size', 'db_size');
    if (size !== undefined) items.push(['Database', fmtBytes(size)]);
    const up = first(s, 'uptime_s');
    if (up !== undefined) items.push(['Uptime', fmtDuration(up)]);
    list.replaceChildren(...items.map(([k, v, cls]) => el('div', {}, el('dt', { text: k }), el('dd', { class: cls || '', text: v }))));

    const board = first(s, 'board', 'model', 'board_name');
    const host = first(s, 'hostname', 'host', 'node');
    $('#board-name').textContent = board || '';
    $('#host-name').textContent = host ? (board ? '· ' : '') + host : '';
    document.title = 'thermlog · ' + (host || board || 'board');
    const ver = first(s, 'version');
    $('#version').textContent = ver ? 'thermlog ' + ver : 'thermlog';
  }

  function latestMap(resp) {
    const map = new Map();
    const list = asArray(resp, 'channels', 'readings', 'latest');
    if (list.length) {
      for (const r of list) {
        map.set(r.key, { value: first(r, 'value', 'v'), err: r.error || r.err });
      }
    } else {
      const vals = first(resp, 'values') || {};
      for (const [k, v] of Object.entries(vals)) map.set(k, { value: v });
    }
    return map;
  }

  function sparkline(points, unit) {
    const W = 120, H = 28;
    const NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    if (!points.length) {
      svg.setAttribute('aria-label', 'no samples in the window');
      return svg;
    }
    let lo = Infinity, hi = -Infinity;
    for (const p of points) {
      lo = Math.min(lo, p.min);
      hi = Math.max(hi, p.max);
    }
    if (hi - lo < 1e-9) {
      lo -= 1;
      hi += 1;
    }
    const t0 = points[0].t, t1 = points[points.length - 1].t || t0 + 1;
    const x = (t) => (t1 > t0 ? ((t - t0) / (t1 - t0)) * (W - 2) + 1 : W / 2);
    const y = (v) => H - 2 - ((v - lo) / (hi - lo)) * (H - 4);
    const band = document.createElementNS(NS, 'polygon');
    const up = points.map((p) => x(p.t).toFixed(1) + ',' + y(p.max).toFixed(1));
    const down = points.slice().reverse().map((p) => x(p.t).toFixed(1) + ',' + y(p.min).toFixed(1));
    band.setAttribute('points', up.concat(down).join(' '));
    const line = document.createElementNS(NS, 'polyline');
    line.setAttribute('points', points.map((p) => x(p.t).toFixed(1) + ',' + y(p.mean).toFixed(1)).join(' '));
    svg.append(band, line);
    svg.setAttribute('aria-label', 'trend from ' + fmtValue(lo, unit) + ' to ' + fmtValue(hi, unit));
    return svg;
  }

  async function loadOverview() {
    const groups = $('#groups');
    const [statsResp, latestResp] = await Promise.all([
      api('stats', winParams()).catch((e) => e),
      api('latest').catch((e) => e),
      loadThrottleCard(),
    ]);
    if (!state.channels.length) {
      notice(groups, 'No channels are stored yet. The daemon writes its first cycle within one interval of starting; this page refreshes on its own.');
      return;
    }
    if (statsResp instanceof ApiError && statsResp.status === 400) {
      // The window itself is refused: numbers of another window would mislead.
      notice(groups, statsResp.message);
      return;
    }
    const stats = statsResp instanceof Error ? new Map() : statsMap(statsResp);
    const latest = latestResp instanceof Error ? new Map() : latestMap(latestResp);
    if (statsResp instanceof Error) banner('Statistics unavailable: ' + statsResp.message);

    const bySource = new Map();
    for (const c of state.channels) {
      const g = GROUPS.some(([s]) => s === c.source) ? c.source : 'other';
      if (!bySource.has(g)) bySource.set(g, []);
      bySource.get(g).push(c);
    }
    const order = GROUPS.concat([['other', 'Other channels']]);
    const sparkCells = [];
    const blocks = [];
    for (const [src, title] of order) {
      const list = bySource.get(src);
      if (!list) continue;
      const tbody = el('tbody');
      for (const c of list) {
        const st = stats.get(c.key) || {};
        const cur = latest.get(c.key);
        const curVal = cur && typeof cur.value === 'number' ? cur.value : undefined;
        const spark = el('td', { class: 'spark-cell', 'data-label': 'Trend' });
        sparkCells.push([c, spark]);
        tbody.append(el('tr', { 'data-key': c.key },
          channelCell(c),
          el('td', { class: 'num current' + (curVal === undefined ? ' missing' : ''), 'data-label': 'Now', 'data-value': curVal, text: curVal === undefined ? (cur && cur.err ? 'read error' : '–') : fmtChannel(curVal, c) }),
          spark,
          el('td', { class: 'num stat', 'data-label': 'p50', 'data-value': st.p50, text: fmtChannel(st.p50, c) }),
          el('td', { class: 'num stat', 'data-label': 'p95', 'data-value': st.p95, text: fmtChannel(st.p95, c) }),
          el('td', { class: 'num stat', 'data-label': 'Max', 'data-value': st.max, text: fmtChannel(st.max, c) })));
      }
      blocks.push(el('div', { class: 'group table-wrap', 'data-source': src },
        el('table', { class: 'ov' },
          el('caption', {}, title + ' ', el('span', { class: 'count', text: '(' + list.length + ')' })),
          el('colgroup', {}, el('col', { class: 'c-name' }), el('col', { class: 'c-now' }), el('col', { class: 'c-spark' }),
            el('col', { class: 'c-stat' }), el('col', { class: 'c-stat' }), el('col', { class: 'c-stat' })),
          el('thead', {}, el('tr', {},
            el('th', { scope: 'col', text: 'Channel' }), el('th', { scope: 'col', class: 'num', text: 'Now' }),
            el('th', { scope: 'col', text: 'Trend' }), el('th', { scope: 'col', class: 'num', text: 'p50' }),
            el('th', { scope: 'col', class: 'num', text: 'p95' }), el('th', { scope: 'col', class: 'num', text: 'Max' }))),
          tbody)));
    }
    groups.replaceChildren(...blocks);
    const key = winKey();
    // The API answers pretty-printed JSON without compression (~125 bytes per point), so the
    // sparklines share a fixed budget to keep the first view light however many channels exist.
    const points = Math.max(8, Math.min(SPARK_POINTS, Math.floor(SPARK_BUDGET / (125 * sparkCells.length))));
    const series = await fetchSeries(sparkCells.map(([c]) => c), points);
    if (winKey() !== key) return;
    for (const [c, cell] of sparkCells) cell.replaceChildren(sparkline(series.get(c.key) || [], c.unit));
  }

  async function refreshLive() {
    try {
      const [s, latest] = await Promise.all([api('status'), api('latest'), loadThrottleCard()]);
      state.status = s;
      renderStatus(s);
      const map = latestMap(latest);
      for (const row of document.querySelectorAll('#groups tr[data-key]')) {
        const c = channelByKey(row.dataset.key);
        const cur = map.get(row.dataset.key);
        const cell = row.querySelector('td.current');
        if (!c || !cell) continue;
        const v = cur && typeof cur.value === 'number' ? cur.value : undefined;
        cell.textContent = v === undefined ? '–' : fmtChannel(v, c);
        cell.classList.toggle('missing', v === undefined);
        if (v === undefined) cell.removeAttribute('data-value');
        else cell.dataset.value = v;
      }
    } catch (e) {
      handleError(e);
    }
  }

  /* ---------- statistics ---------- */

  function statsMap(resp) {
    const map = new Map();
    for (const c of asArray(resp, 'channels', 'stats')) map.set(c.key, c);
    return map;
  }

  function coverageOf(st) {
    const c = st.coverage;
    if (c && typeof c === 'object') return first(c, 'ratio', 'fraction', 'value');
    return c;
  }

  /* Time-in-state as [{value, share}] with share a fraction. */
  function timeInState(st) {
    const raw = first(st, 'time_in_state', 'states');
    if (!raw) return [];
    let list = Array.isArray(raw) ? raw.map((r) => ({ value: first(r, 'value', 'freq', 'state'), share: first(r, 'share', 'fraction', 'ratio') })) :
      Object.entries(raw).map(([k, v]) => ({ value: Number(k), share: v }));
    list = list.filter((r) => typeof r.value === 'number' && typeof r.share === 'number');
    if (list.some((r) => r.share > 1.0001)) list.forEach((r) => (r.share /= 100));
    return list.sort((a, b) => b.value - a.value);
  }

  async function loadStatistics() {
    const tbody = $('#stats-table tbody');
    const tis = $('#time-in-state');
    $('#md-box').hidden = true; // a copy of another window's table would mislead
    let resp;
    try {
      resp = await api('stats', winParams());
    } catch (e) {
      // Clear the previous window's numbers: they would pass for this window's.
      tbody.replaceChildren(el('tr', {}, el('td', { colspan: 8, class: 'notice', text: e.message })));
      tis.replaceChildren();
      $('#stats-summary').textContent = '';
      handleError(e);
      return;
    }
    const table = $('#stats-table');
    table.dataset.from = state.win.from;
    table.dataset.to = state.win.to;
    const list = sortByGroup(asArray(resp, 'channels', 'stats'));
    const rows = [];
    const tisBlocks = [];
    let withData = 0;
    for (const st of list) {
      const c = channelByKey(st.key) || normChannel(st);
      const unit = st.unit || c.unit;
      const label = st.label || c.label;
      const ch = { ...c, label, unit };
      const count = first(st, 'count', 'samples', 'n') || 0;
      if (count > 0) withData++;
      const cov = coverageOf(st);
      const td = (name, v, text) => el('td', { class: 'num', 'data-label': name, 'data-field': name.toLowerCase(), 'data-value': v, text });
      rows.push(el('tr', { 'data-key': st.key },
        channelCell(ch),
        td('Mean', st.mean, fmtChannel(st.mean, ch, 2)),
        td('Median', st.p50, fmtChannel(st.p50, ch, 2)),
        td('p95', st.p95, fmtChannel(st.p95, ch, 2)),
        td('Max', st.max, fmtChannel(st.max, ch, 3)),
        el('td', { 'data-label': 'Time of max', 'data-field': 'time of max', 'data-value': st.max_time, text: fmtTime(st.max_time, true) }),
        td('Samples', count, intFmt.format(count)),
        td('Coverage', cov, fmtPercent(cov))));
      const states = timeInState(st);
      if (states.length && (isClock(ch) || st.time_in_state)) {
        tisBlocks.push(el('table', { 'data-key': st.key },
          el('caption', {}, label),
          el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Clock' }), el('th', { scope: 'col', class: 'num', text: 'Share' }), el('th', { scope: 'col', text: '', 'aria-hidden': 'true' }))),
          el('tbody', {}, ...states.map((s) => el('tr', {},
            el('td', { class: 'num', text: fmtValue(s.value, unit) }),
            el('td', { class: 'num', 'data-value': s.share, text: fmtPercent(s.share) }),
            el('td', { style: 'width:40%' }, el('div', { class: 'bar', style: 'width:' + (s.share * 100).toFixed(1) + '%' })))))));
      }
    }
    if (!rows.length) {
      rows.push(el('tr', {}, el('td', { colspan: 8, class: 'notice', text: 'No channels are stored yet.' })));
    }
    tbody.replaceChildren(...rows);
    tis.replaceChildren(...(tisBlocks.length ? tisBlocks : [el('p', { class: 'notice', text: 'No clock channels with samples in this window.' })]));
    const excluded = first(resp, 'unsynced_excluded', 'excluded_unsynced', 'unsynced_cycles');
    let summary = list.length + ' channels, ' + withData + ' with samples in the window.';
    if (typeof resp.cycles === 'number' && typeof resp.expected_cycles === 'number') {
      summary += ' ' + intFmt.format(resp.cycles) + ' cycles stored, ' + fmtPercent(resp.coverage) + ' of the window observed';
      summary += typeof resp.longest_gap_s === 'number' && resp.longest_gap_s > 0 ? ', longest gap ' + fmtDuration(resp.longest_gap_s) + '.' : '.';
    }
    if (!withData && list.length) summary = 'No samples in this window: pick a longer window, or wait for the next cycle.';
    if (excluded) summary += ' ' + intFmt.format(excluded) + ' cycles with an unsynchronized clock are excluded.';
    summary += resp.weight === 'time'
      ? ' Weighted by time: each sample counts the time it stands for; percentiles by the weighted inverted CDF.'
      : ' Weighted by samples: each sample counts once; percentiles interpolate linearly between closest ranks (numpy’s default), a cooling state’s by the inverted CDF (a state that occurred).';
    if (resp.mixed_intervals) summary += ' The window mixes sampling intervals: faster stretches weigh more by samples than by time.';
    $('#stats-summary').textContent = summary;
  }

  /* The statistics table as Markdown, the form users paste into reports and issues. */
  function statsMarkdown() {
    const head = ['Sensor', 'Mean', 'Median', 'p95', 'Max', 'Time of max', 'Samples', 'Coverage'];
    const cell = (s) => s.replace(/\|/g, '\\|').trim();
    const lines = ['| ' + head.join(' | ') + ' |', '|' + head.map((h, i) => (i === 0 || i === 5 ? ' --- ' : ' ---: ')).join('|') + '|'];
    for (const tr of document.querySelectorAll('#stats-table tbody tr[data-key]')) {
      const name = tr.querySelector('th span').textContent + ' (`' + tr.dataset.key + '`)';
      const cells = Array.from(tr.querySelectorAll('td'), (td) => cell(td.textContent));
      lines.push('| ' + [cell(name)].concat(cells).join(' | ') + ' |');
    }
    const w = state.win;
    lines.push('', 'Window ' + fmtTime(w.from) + ' to ' + fmtTime(w.to) + ' (local time); percentiles: linear interpolation between closest ranks (cooling states: inverted CDF).');
    return lines.join('\n') + '\n';
  }

  async function copyMarkdown() {
    const box = $('#md-box');
    const text = $('#md-text');
    const status = $('#md-status');
    text.value = statsMarkdown();
    box.hidden = false;
    text.select();
    try {
      await navigator.clipboard.writeText(text.value);
      status.textContent = '(copied to the clipboard)';
    } catch (e) {
      // Plain HTTP to a board is not a secure context: the clipboard is off limits there.
      status.textContent = '(selected: press Ctrl+C to copy)';
    }
  }

  /* ---------- throttling: the Overview card and the History chart's episode bands ---------- */

  /* Whether @c is a load channel (busy share in percent): chosen as a series on History. */
  const isLoad = (c) => c.kind === 'load' || (c.unit === 'percent' && c.source === 'load');

  /* A load channel's name on the chart: a CPU's says its cluster (the cpufreq policy's label). */
  function loadSeriesName(c) {
    const m = /^load\/cpu(\d+)$/.exec(c.key);
    if (m) {
      const cpu = Number(m[1]);
      const policy = state.channels.find((p) => p.source === 'cpufreq' && Array.isArray(p.meta && p.meta.affected_cpus) && p.meta.affected_cpus.includes(cpu));
      return 'cpu' + cpu + ' load' + (policy ? ' (' + policy.label + ')' : '');
    }
    return (c.label === c.key ? c.key : c.label) + ' load';
  }

  /* The left axis's title names load (%) while a load series is drawn on it. */
  function loadAxisTitle(id) {
    const g = state.charts[id];
    const axes = $('#' + id.replace('-chart', '-axes'));
    if (!g || !axes) return;
    const names = g.getLabels().slice(1);
    const vis = g.visibility();
    const shown = (g.thermlogLoads || []).some((n) => vis[names.indexOf(n)]);
    axes.querySelector('[data-axis="y"]').textContent = shown ? 'Temperature (°C) and load (%), left axis' : 'Temperature (°C), left axis';
  }

  /* Episodes of a /api/v1/throttle answer as [start, end] in ms; an open one ends now. */
  function throttleSpans(resp) {
    const nowMs = Date.now();
    return asArray(resp, 'episodes').map((e) => [Date.parse(e.start), e.end ? Date.parse(e.end) : Math.max(Date.parse(e.last_seen), nowMs)])
      .filter(([a, b]) => isFinite(a) && isFinite(b) && a <= b);
  }

  /* Throttle episodes on a chart: a red column, fainter than a run's grey, and a strip on top. */
  function shadeThrottle(ctx, area, dg, spans, colors) {
    ctx.save();
    for (const [a, b] of spans) {
      const x1 = Math.max(area.x, dg.toDomXCoord(a));
      const x2 = Math.min(area.x + area.w, dg.toDomXCoord(b));
      if (x2 <= x1) continue;
      const w = Math.max(1, x2 - x1);
      ctx.fillStyle = colors.throttle;
      ctx.fillRect(x1, area.y, w, area.h);
      ctx.fillStyle = colors.throttleStrip;
      ctx.fillRect(x1, area.y, w, 5);
    }
    ctx.restore();
  }

  /* A cap as `thermlog throttle` prints it: "1608 MHz of 2256 MHz". */
  function fmtCap(minHz, maxHz) {
    const mhz = (v) => (typeof v === 'number' ? (v / 1e6).toFixed(0) + ' MHz' : '–');
    return typeof minHz === 'number' ? mhz(minHz) + ' of ' + mhz(maxHz) : 'unknown (counters only)';
  }

  /*
   * The Throttling card from /api/v1/throttle?episodes=open: per domain of the last 24 hours,
   * whether it is capped now (an open episode), its episodes, throttled time, share, deepest cap.
   */
  function renderThrottle(resp) {
    const tbody = $('#throttle-table tbody');
    const note = $('#throttle-note');
    const card = $('#throttle-card');
    const domains = asArray(resp, 'domains');
    const open = new Map();
    for (const e of asArray(resp, 'episodes')) if (!e.end) open.set(e.domain, e);
    const from = Date.parse(resp.from) / 1000;
    const to = Date.parse(resp.to) / 1000;
    const total = domains.reduce((n, d) => n + d.episodes, 0);
    card.dataset.episodes = total;
    card.dataset.from = from;
    card.dataset.to = to;
    $('#throttle-table').hidden = domains.length === 0;
    if (!domains.length) {
      note.textContent = 'No frequency domain was throttled from ' + fmtTime(from) + ' to ' + fmtTime(to) + '.';
      tbody.replaceChildren();
      return;
    }
    note.textContent = 'Last 24 hours, ' + fmtTime(from) + ' to ' + fmtTime(to) + ': ' + intFmt.format(total) +
      ' episode' + (total === 1 ? '' : 's') + ' in ' + domains.length + ' domain' + (domains.length === 1 ? '' : 's') +
      '; ' + (open.size ? open.size + ' throttled now' : 'none throttled now') + '. Causes and zones: thermlog throttle, and red bands on History.';
    tbody.replaceChildren(...domains.map((d) => {
      const o = open.get(d.domain);
      const now = o ? 'throttled since ' + fmtTime(Date.parse(o.start) / 1000) + ' (' + o.cause + (o.zone ? ', ' + o.zone : '') + ')' : 'not throttled';
      return el('tr', { 'data-domain': d.domain, 'data-now': o ? 'throttled' : 'free' },
        el('th', { scope: 'row', text: d.domain }),
        el('td', { class: o ? 'bad' : '', 'data-label': 'Now', text: now }),
        el('td', { class: 'num', 'data-label': 'Episodes', 'data-value': d.episodes, text: intFmt.format(d.episodes) }),
        el('td', { class: 'num', 'data-label': 'Throttled', 'data-value': d.throttled_s, text: fmtDuration(d.throttled_s) }),
        el('td', { class: 'num', 'data-label': 'Share', 'data-value': d.share, text: fmtPercent(d.share, 1) }),
        el('td', { class: 'num', 'data-label': 'Deepest cap', text: fmtCap(d.min_hz, d.max_hz) }));
    }));
  }

  /* The card from /api/v1/throttle (its default window: the last 24 hours, to now), open only. */
  async function loadThrottleCard() {
    try {
      renderThrottle(await api('throttle', { episodes: 'open' }));
    } catch (e) {
      $('#throttle-note').textContent = 'Throttle episodes unavailable: ' + e.message;
      $('#throttle-table').hidden = true;
    }
  }

  /* ---------- charts (dygraphs, loaded when first needed) ---------- */

  let dygraphsLoading = null;
  function loadDygraphs() {
    if (window.Dygraph) return Promise.resolve();
    if (!dygraphsLoading) {
      dygraphsLoading = new Promise((resolve, reject) => {
        document.head.append(el('link', { rel: 'stylesheet', href: 'vendor/dygraph.min.css' }));
        const s = el('script', { src: 'vendor/dygraph.min.js' });
        s.onload = () => resolve();
        s.onerror = () => reject(new Error('could not load the chart library'));
        document.head.append(s);
      });
    }
    return dygraphsLoading;
  }

  function chartColors() {
    const css = getComputedStyle(document.documentElement);
    const dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
    return {
      grid: css.getPropertyValue('--line').trim() || '#ddd',
      run: dark ? 'rgba(148, 163, 184, 0.16)' : 'rgba(100, 116, 139, 0.13)',
      throttle: dark ? 'rgba(248, 113, 113, 0.10)' : 'rgba(220, 38, 38, 0.07)',
      throttleStrip: dark ? 'rgba(248, 113, 113, 0.85)' : 'rgba(185, 28, 28, 0.8)',
      axis: css.getPropertyValue('--muted').trim() || '#666',
      palette: dark ?
        ['#fb923c', '#60a5fa', '#34d399', '#f472b6', '#facc15', '#a78bfa', '#f87171', '#2dd4bf', '#e879f9', '#fde68a', '#93c5fd', '#86efac', '#fca5a5', '#c4b5fd', '#67e8f9', '#d9f99d'] :
        ['#c2410c', '#1d4ed8', '#047857', '#be185d', '#a16207', '#6d28d9', '#b91c1c', '#0f766e', '#a21caf', '#854d0e', '#1e40af', '#15803d', '#9f1239', '#4338ca', '#0e7490', '#4d7c0f'],
    };
  }

  function drawChart(id, labels, data, opts) {
    const colors = chartColors();
    if (state.charts[id]) {
      state.charts[id].destroy();
      delete state.charts[id];
    }
    const clockNames = opts.clocks || [];
    const series = {};
    // Clock bands (DVFS swings between buckets) would wash over the temperatures: keep them faint.
    for (const n of clockNames) series[n] = { axis: 'y2', strokePattern: [6, 3], fillAlpha: 0.04, stepPlot: true };
    const y2 = clockNames.length > 0;
    // Axis titles are HTML above the plot (#history-axes), readable at any width; in the
    // canvas they would take a third of a phone's plot.
    const narrow = $('#' + id).clientWidth < 520;
    const keys = opts.keys || [];
    const g = new window.Dygraph($('#' + id), data, {
      labels,
      visibility: keys.map(seriesShown),
      customBars: !!opts.bars,
      series,
      colors: colors.palette,
      legend: 'always',
      labelsDiv: $('#' + opts.legend),
      labelsSeparateLines: false,
      showRangeSelector: !!opts.range,
      rangeSelectorPlotFillColor: colors.palette[0],
      rangeSelectorPlotStrokeColor: colors.palette[0],
      gridLineColor: colors.grid,
      axisLineColor: colors.axis,
      connectSeparatedPoints: false,
      strokeWidth: 1.4,
      fillAlpha: 0.2,
      highlightCircleSize: 3,
      // Runs as shaded columns behind the lines: [start, end] in ms.
      // Throttle episodes: red columns with a strip along the top (shadeThrottle).
      underlayCallback: (opts.runs && opts.runs.length) || (opts.throttle && opts.throttle.length) ? (ctx, area, dg) => {
        ctx.save();
        ctx.fillStyle = colors.run;
        for (const [a, b] of opts.runs || []) {
          const x1 = Math.max(area.x, dg.toDomXCoord(a));
          const x2 = Math.min(area.x + area.w, dg.toDomXCoord(b));
          if (x2 > x1) ctx.fillRect(x1, area.y, Math.max(1, x2 - x1), area.h);
        }
        ctx.restore();
        if (opts.throttle) shadeThrottle(ctx, area, dg, opts.throttle, colors);
      } : undefined,
      axes: {
        // Load series share the left axis with the temperatures (both 0-100): a percent each.
        y: { valueFormatter: (v, o, name) => (typeof v !== 'number' ? v : (opts.loads || []).includes(name) ? v.toFixed(1) + ' %' : v.toFixed(1) + ' °C'), axisLabelWidth: narrow ? 30 : 44 },
        y2: { valueFormatter: (v) => (typeof v === 'number' ? v.toFixed(2) + ' GHz' : v), axisLabelWidth: narrow ? 30 : 44, independentTicks: true, drawGrid: false },
        // A run's chart spans minutes: its ticks carry seconds ("16:10:30"), wider than 60 px.
        x: { valueFormatter: (ms) => fmtTime(ms / 1000, true), axisLabelWidth: opts.xLabelWidth || 60 },
      },
    });
    g.thermlogKeys = keys;
    state.charts[id] = g;
    const axes = $('#' + id.replace('-chart', '-axes'));
    if (axes) axes.querySelector('[data-axis="y2"]').hidden = !y2;
    g.thermlogLoads = opts.loads || [];
    loadAxisTitle(id);
    return g;
  }

  function showSeries(k, on) {
    for (const [id, g] of Object.entries(state.charts)) {
      const j = g.thermlogKeys.indexOf(k);
      if (j >= 0) g.setVisibility(j, on);
      loadAxisTitle(id);
    }
  }

  function seriesCount(keys) {
    $('#series-count').textContent = '(' + keys.filter(seriesShown).length + ' of ' + keys.length + ' shown)';
  }

  /* One labelled checkbox per charted channel; toggles the series in every chart, remembered. */
  function renderSeriesList(keys, labels) {
    const box = $('#series-list');
    // dygraphs colours series by position, hidden ones too, but only tells those it draws.
    const palette = chartColors().palette;
    box.replaceChildren(...keys.map((k, i) => {
      const input = el('input', { type: 'checkbox', 'data-key': k });
      input.checked = seriesShown(k);
      input.addEventListener('change', () => {
        // Only departures from the default are kept, so new channels follow the default.
        if (input.checked === shownByDefault(k)) delete state.series[k];
        else state.series[k] = input.checked;
        saveSeriesChoice();
        showSeries(k, input.checked);
        seriesCount(keys);
      });
      return el('label', {}, input, el('span', { class: 'swatch', style: 'background:' + palette[i % palette.length] }), el('span', { text: labels[i] }));
    }));
    seriesCount(keys);
    $('#series-default').onclick = () => {
      state.series = {};
      saveSeriesChoice();
      for (const input of box.querySelectorAll('input[data-key]')) {
        input.checked = shownByDefault(input.dataset.key);
        showSeries(input.dataset.key, input.checked);
      }
      seriesCount(keys);
    };
  }

  async function loadHistory() {
    const box = $('#history-chart');
    const legend = $('#history-legend');
    legend.textContent = 'Loading…';
    const showClocks = $('#show-clocks').checked;
    const wanted = state.channels.filter((c) => isTemp(c) || (showClocks && isClock(c)) || isLoad(c));
    fillPeakSelect();
    if (!wanted.length) {
      notice(box, 'No temperature channels are stored yet.');
      legend.textContent = '';
      return;
    }
    let series;
    let runs;
    let throttle;
    try {
      // Runs and throttle episodes shade the chart; without them (an older daemon) it still draws.
      [, series, runs, throttle] = await Promise.all([loadDygraphs(), fetchSeries(wanted, CHART_POINTS),
        api('runs', winParams()).catch(() => null), api('throttle', winParams()).catch(() => null)]);
    } catch (e) {
      handleError(e, box);
      legend.textContent = '';
      return;
    }
    const labels = ['Time'];
    const keys = [];
    const clocks = [];
    const loads = [];
    const cols = [];
    wanted.forEach((c) => {
      const pts = series.get(c.key) || [];
      if (!pts.length) return;
      const name = isLoad(c) ? loadSeriesName(c) : c.label === c.key ? c.key : c.label;
      labels.push(labels.includes(name) ? c.key : name);
      keys.push(c.key);
      if (isClock(c)) clocks.push(labels[labels.length - 1]);
      if (isLoad(c)) loads.push(labels[labels.length - 1]);
      cols.push({ pts, scale: isClock(c) ? 1e-9 : 1 });
    });
    if (!cols.length) {
      notice(box, 'No samples in this window: choose a longer window.');
      legend.textContent = '';
      return;
    }
    const rows = new Map();
    cols.forEach((col, j) => {
      for (const p of col.pts) {
        let row = rows.get(p.t);
        if (!row) {
          row = new Array(cols.length + 1).fill(null);
          row[0] = new Date(p.t * 1000);
          rows.set(p.t, row);
        }
        row[j + 1] = [p.min * col.scale, p.mean * col.scale, p.max * col.scale];
      }
    });
    const data = Array.from(rows.values()).sort((a, b) => a[0] - b[0]);
    box.replaceChildren();
    legend.textContent = '';
    const nowMs = Date.now();
    const spans = asArray(runs, 'runs').map((r) => [Date.parse(r.start), r.end ? Date.parse(r.end) : nowMs]).filter(([a, b]) => a <= b);
    const throttled = throttleSpans(throttle);
    $('#history-runs').textContent = (spans.length ? 'Grey columns are the ' + intFmt.format(spans.length) + ' runs that started in the window (Runs). ' : '') +
      (throttled.length ? 'Red columns with a red strip on top are the ' + intFmt.format(throttled.length) + ' throttle episodes of the window (Overview, Throttling).' : '');
    drawChart('history-chart', labels, data, { bars: true, clocks, loads, keys, legend: 'history-legend', range: true, runs: spans, throttle: throttled });
    box.dataset.runs = spans.length;
    box.dataset.throttle = throttled.length;
    renderSeriesList(keys, labels.slice(1));
    box.dataset.points = data.length;
  }

  function fillPeakSelect() {
    const sel = $('#peak-channel');
    if (sel.options.length) return;
    const temps = state.channels.filter(isTemp);
    for (const c of temps) sel.append(el('option', { value: c.key, text: c.label === c.key ? c.key : c.label + ' (' + c.key + ')' }));
    const preferred = temps.find((c) => /npu/i.test(c.key)) || temps.find((c) => /big/i.test(c.key)) || temps[0];
    if (preferred) sel.value = preferred.key;
  }

  /* Peak rows as {t, values: Map(key -> value)} for any of the plausible layouts. */
  function normPeak(resp) {
    const cols = asArray(first(resp, 'channels', 'columns') || [], 'keys').map((c) => (typeof c === 'string' ? c : c.key));
    const raw = asArray(resp, 'samples', 'rows', 'cycles', 'points');
    const rows = [];
    for (const r of raw) {
      const t = Array.isArray(r) ? r[0] : first(r, 'time', 'ts', 'unix', 't');
      const values = new Map();
      const v = Array.isArray(r) ? r.slice(1) : first(r, 'values', 'channels');
      if (Array.isArray(v)) {
        v.forEach((x, i) => {
          if (x && typeof x === 'object') values.set(x.key, first(x, 'value', 'v'));
          else values.set(cols[i], x);
        });
      } else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) values.set(k, x);
      } else if (!Array.isArray(r)) {
        for (const [k, x] of Object.entries(r)) if (typeof x === 'number' && !['time', 'ts', 'unix', 't'].includes(k)) values.set(k, x);
      }
      rows.push({ t: typeof t === 'string' ? Date.parse(t) / 1000 : t, values });
    }
    return rows.filter((r) => typeof r.t === 'number').sort((a, b) => a.t - b.t);
  }

  async function loadPeak() {
    const key = $('#peak-channel').value;
    const n = Math.max(3, Math.min(1000, parseInt($('#peak-samples').value, 10) || 30));
    const box = $('#peak-chart');
    const summary = $('#peak-summary');
    if (!key) {
      notice(box, 'No temperature channel to search.');
      return;
    }
    let resp;
    try {
      [resp] = await Promise.all([api('peak', { channel: key, samples: n, ...winParams() }), loadDygraphs()]);
    } catch (e) {
      summary.textContent = '';
      handleError(e, box);
      return;
    }
    const rows = normPeak(resp);
    const c = channelByKey(key) || { key, label: key, unit: 'celsius' };
    const max = first(resp, 'max', 'peak', 'value');
    const maxTime = first(resp, 'max_time', 'peak_time', 'time');
    if (!rows.length) {
      summary.textContent = '';
      notice(box, 'No samples of ' + c.label + ' in this window.');
      return;
    }
    summary.textContent = c.label + ' peaked at ' + fmtValue(typeof max === 'object' ? first(max, 'value') : max, c.unit, 3) +
      (typeof maxTime === 'number' ? ' at ' + fmtTime(maxTime, true) : '') + '; ' + rows.length + ' cycles around it, the chosen series plotted' +
      ($('#show-clocks').checked ? ', clocks on the right axis.' : '.');
    const showClocks = $('#show-clocks').checked;
    const keys = [];
    const present = new Set();
    rows.forEach((r) => r.values.forEach((_, k) => present.add(k)));
    for (const ch of state.channels) {
      if (present.has(ch.key) && (isTemp(ch) || (showClocks && isClock(ch)))) keys.push(ch);
    }
    const labels = ['Time'].concat(keys.map((ch) => (ch.label === ch.key ? ch.key : ch.label)));
    const clocks = keys.filter(isClock).map((ch) => (ch.label === ch.key ? ch.key : ch.label));
    const data = rows.map((r) => [new Date(r.t * 1000)].concat(keys.map((ch) => {
      const v = r.values.get(ch.key);
      return typeof v === 'number' ? (isClock(ch) ? v * 1e-9 : v) : null;
    })));
    box.replaceChildren();
    drawChart('peak-chart', labels, data, { clocks, keys: keys.map((ch) => ch.key), legend: 'peak-legend' });
  }

  /* ---------- lifetime ---------- */

  function warningText(w) {
    return typeof w === 'string' ? w : first(w, 'message', 'text', 'code') || JSON.stringify(w);
  }

  /* The effective life before the seal-ageing cap: life_uncapped_h, else the 0 K relative life. */
  function effUncappedOf(cap) {
    if (typeof cap.life_uncapped_h === 'number') return cap.life_uncapped_h;
    const rel0 = asArray(first(cap, 'relative_lifetime') || []).find((r) => r.reduction_k === 0);
    return rel0 && typeof rel0.life_h === 'number' ? rel0.life_h : undefined;
  }

  /* A life no longer than the seal-ageing cap: beyond it, "≥ 15 years (cap)". */
  function fmtCappedHours(h, capH) {
    if (typeof capH !== 'number' || !(h > capH)) return fmtHours(h);
    const y = capH / HOURS_PER_YEAR;
    return '≥ ' + (Number.isInteger(y) ? y : y.toFixed(1)) + ' years (cap)';
  }

  /*
   * A sensor temperature and, with self-heating, the temperature the model ages the part at
   * beside it ("49.4 °C measured, 52.4 °C effective"), as `thermlog lifetime` prints them.
   */
  function tempsText(cap, measured, effective) {
    const m = fmtValue(measured, 'celsius', 1);
    if (!(typeof cap.self_heating_k === 'number' && cap.self_heating_k !== 0 && typeof effective === 'number')) return m;
    return m + ' measured, ' + fmtValue(effective, 'celsius', 1) + ' effective';
  }

  const atTemps = (cap, measured, effective) => (typeof measured === 'number' ? ' at ' + tempsText(cap, measured, effective) : '');

  /*
   * The consumed life over the whole service: consumed_fraction_total (the history plus the time
   * in service before it, extrapolated), else the history's own consumed_fraction.
   */
  function consumedNode(cap) {
    const total = first(cap, 'consumed_fraction_total', 'consumed_fraction', 'consumed');
    const extrapolated = cap.consumed_fraction_extrapolated;
    if (!(typeof extrapolated === 'number' && extrapolated > 0)) return fmtPercent(total, 2);
    const before = typeof cap.unobserved_service_h === 'number' ? fmtDuration(cap.unobserved_service_h * 3600) + ' in service before the history' : 'time in service before the history';
    return el('span', { 'data-extrapolated': 'true' }, fmtPercent(total, 2) + ' (partly extrapolated)',
      el('span', { class: 'hours', text: ' ' + fmtPercent(extrapolated, 2) + ' of it extrapolated over ' + before + ', ' + fmtPercent(cap.consumed_fraction, 2) + ' measured' }));
  }

  /* "21.30–26.10 years": a life's band, the sensor's uncertainty either way. */
  function bandText(pair, capH) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'number' || typeof pair[1] !== 'number') return '–';
    return fmtCappedHours(pair[0], capH) + ' – ' + fmtCappedHours(pair[1], capH);
  }

  const SVGNS = 'http://www.w3.org/2000/svg';
  function svgNode(tag, attrs, ...children) {
    const n = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
    for (const c of children) n.append(c);
    return n;
  }

  /*
   * The design review's mission profile: hours per bin of the temperature the model ages the
   * part at (GET /api/v1/lifetime/profile), a bar a bin, as `thermlog report --lifetime` draws it.
   */
  function profileChart(prof, binK) {
    const bins = asArray(prof && prof.bins || []);
    const W = 320, H = 120, L = 4, B = 18;
    const hi = Math.max(...bins.map((b) => (typeof b.hours === 'number' ? b.hours : 0)), 0) || 1;
    const bw = bins.length ? (W - 2 * L) / bins.length : 0;
    const svg = svgNode('svg', { class: 'cap-chart cap-profile', viewBox: `0 0 ${W} ${H}`, role: 'img',
      'data-bins': bins.length, 'aria-label': 'hours per ' + binK + ' K bin of the temperature the model ages the part at' });
    bins.forEach((b, i) => {
      const h = typeof b.hours === 'number' ? (b.hours / hi) * (H - B - 6) : 0;
      svg.append(svgNode('rect', { x: (L + i * bw + 1).toFixed(1), y: (H - B - h).toFixed(1), width: Math.max(1, bw - 2).toFixed(1), height: h.toFixed(1), 'data-hours': b.hours },
        svgNode('title', {}, '[' + b.from_c + ', ' + b.to_c + ') °C: ' + (typeof b.hours === 'number' ? b.hours.toFixed(1) : '–') + ' h, ' + fmtPercent(b.consumed_share) + ' of the consumed life')));
    });
    if (bins.length) {
      svg.append(svgNode('text', { x: L, y: H - 4 }, bins[0].from_c + ' °C'),
        svgNode('text', { x: W - L, y: H - 4, 'text-anchor': 'end' }, bins[bins.length - 1].to_c + ' °C'));
    }
    return el('figure', { class: 'cap-figure' }, svg, el('figcaption', { text: 'Mission profile: hours per ' + binK + ' K bin of the temperature the model ages the part at' }));
  }

  /*
   * The consumed life over the window (GET /api/v1/lifetime/series): the line, and dashed the
   * band of the sensor's uncertainty, as the design review charts it.
   */
  function consumedChart(series) {
    const pts = asArray(series && series.points || []).filter((p) => typeof p.consumed_fraction === 'number');
    const W = 320, H = 120, L = 4, B = 18;
    const svg = svgNode('svg', { class: 'cap-chart cap-consumed', viewBox: `0 0 ${W} ${H}`, role: 'img', 'data-points': pts.length,
      'aria-label': 'consumed life over the window, with the band of the sensor uncertainty' });
    if (pts.length) {
      const t = (p) => Date.parse(p.to);
      const t0 = t(pts[0]), t1 = t(pts[pts.length - 1]);
      const hi = Math.max(...pts.map((p) => Math.max(p.consumed_fraction, (p.consumed_fraction_band || [])[0] || 0))) || 1;
      const x = (p) => (t1 > t0 ? L + ((t(p) - t0) / (t1 - t0)) * (W - 2 * L) : W / 2);
      const y = (v) => H - B - (v / hi) * (H - B - 6);
      for (const k of [0, 1]) {
        const band = pts.filter((p) => Array.isArray(p.consumed_fraction_band) && typeof p.consumed_fraction_band[k] === 'number');
        svg.append(svgNode('polyline', { class: 'band', points: band.map((p) => x(p).toFixed(1) + ',' + y(p.consumed_fraction_band[k]).toFixed(1)).join(' ') }));
      }
      svg.append(svgNode('polyline', { class: 'line', points: pts.map((p) => x(p).toFixed(1) + ',' + y(p.consumed_fraction).toFixed(1)).join(' ') }));
      svg.append(svgNode('text', { x: L, y: H - 4 }, fmtTime(t0 / 1000)), svgNode('text', { x: W - L, y: H - 4, 'text-anchor': 'end' }, fmtTime(t1 / 1000)),
        svgNode('text', { x: L, y: 12 }, fmtPercent(hi, 3)));
    }
    return el('figure', { class: 'cap-figure' }, svg, el('figcaption', { text: 'Consumed life over the window (dashed: the sensor uncertainty)' }));
  }

  /* The self-heating measured against the model, when an ambient and a case sensor were read. */
  function checkText(cap) {
    const c = cap.self_heating_check;
    if (!c || typeof c.measured_mean_k !== 'number') return null;
    const k = (v) => (typeof v === 'number' ? v.toFixed(2) + ' K' : '–');
    let text = 'measured ' + k(c.measured_mean_k) + ' (p95 ' + k(c.measured_p95_k) + ')';
    if (typeof c.modelled_k === 'number') text += ', modelled ' + k(c.modelled_k) + (c.agrees === false ? ': they disagree' : ': they agree');
    if (c.ambient_looks_like_case) text += '; the ambient sensor looks like a case measurement';
    return text;
  }

  function renderCapacitor(cap, prof, series, binK) {
    const d = first(cap, 'consumed_fraction_total', 'consumed_fraction', 'consumed');
    const eff = cap.effective_life_h;
    const mean = cap.life_at_mean_temp_h;
    const facts = [
      ['Consumed life', consumedNode(cap)],
      ['Remaining life', hoursNode(first(cap, 'remaining_h', 'remaining_life_h'))],
      ['Effective life', hoursNode(eff)],
      ['Equivalent temperature', tempsText(cap, cap.equivalent_temp_c, cap.equivalent_effective_temp_c)],
      ['Life at the mean temperature', hoursNode(mean, atTemps(cap, cap.mean_temp_c, cap.mean_effective_temp_c))],
    ];
    if (cap.life_at_p95_temp_h !== undefined) facts.push(['Life at the p95 temperature', hoursNode(cap.life_at_p95_temp_h, atTemps(cap, cap.p95_temp_c, cap.p95_effective_temp_c))]);
    if (typeof cap.self_heating_k === 'number' && cap.self_heating_k !== 0) {
      facts.push(['Self-heating added', (cap.self_heating_k > 0 ? '+' : '') + cap.self_heating_k + ' K: the model ages the part at the measured temperature plus this rise']);
    }
    if (cap.basis_reason) facts.push(['Ages at', 'the ' + cap.basis + ' temperature: ' + cap.basis_reason]);
    if (cap.band) {
      facts.push(['Life with ±' + cap.band.uncertainty_k + ' K', bandText(cap.band.effective_life_h, cap.life_cap_h)]);
      facts.push(['Remaining with ±' + cap.band.uncertainty_k + ' K', bandText(cap.band.remaining_h, cap.life_cap_h)]);
    }
    const check = checkText(cap);
    if (check) facts.push(['Self-heating', check]);
    if (cap.vent) facts.push(['Vent clearance', cap.vent.verdict === 'not recorded' ? 'not recorded' : cap.vent.verdict + ': ' + cap.vent.rule]);
    if (cap.observed_h !== undefined) facts.push(['Observed', fmtDuration(cap.observed_h * 3600)]);
    if (cap.coverage !== undefined) facts.push(['Coverage', fmtPercent(typeof cap.coverage === 'object' ? first(cap.coverage, 'ratio', 'fraction') : cap.coverage)]);
    // Compare uncapped figures: a capped effective life says nothing about the temperature spread.
    const effUncapped = effUncappedOf(cap) ?? eff;
    if (cap.capped) facts.push(['Effective life before the cap', hoursNode(effUncapped, ' (capped by seal ageing or the service date)')]);
    let why = '';
    if (typeof effUncapped === 'number' && typeof mean === 'number' && effUncapped > 0) {
      const ratio = mean / effUncapped;
      why = ratio > 1.005 ?
        'The life at the mean temperature is ' + ratio.toFixed(2) + '× the effective life' + (cap.capped ? ' (both before the cap)' : '') +
        ': ageing speeds up exponentially with temperature, so the hotter spells consume more life than the cooler spells save. The equivalent temperature (' +
        fmtValue(cap.equivalent_temp_c, 'celsius', 1) + ') is the constant temperature that would age the part as fast as the measured history; it sits above the mean temperature' +
        (typeof cap.mean_temp_c === 'number' ? ' (' + fmtValue(cap.mean_temp_c, 'celsius', 1) + ')' : '') + ' for the same reason.' :
        'The temperature barely varied, so the effective life equals the life at the mean temperature.';
    }
    const rel = asArray(first(cap, 'relative_lifetime', 'relative') || []);
    const relTable = rel.length ? el('div', { class: 'table-wrap' }, el('table', { class: 'relative' },
      el('caption', { text: 'If it ran cooler' }),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Cooler by' }), el('th', { scope: 'col', class: 'num', text: 'Life factor' }), el('th', { scope: 'col', class: 'num', text: 'Expected life' }))),
      el('tbody', {}, ...rel.map((r) => el('tr', {},
        el('td', { text: r.reduction_k ? '−' + r.reduction_k + ' K' : 'as measured' }),
        el('td', { class: 'num', text: (typeof r.factor === 'number' ? r.factor.toFixed(r.factor < 10 ? 2 : 1) : '–') + '×' }),
        el('td', { class: 'num', 'data-value': r.life_h, text: fmtCappedHours(r.life_h, cap.life_cap_h) })))))) : null;
    const warnings = asArray(cap.warnings || []);
    const pct = typeof d === 'number' ? Math.max(0, Math.min(1, d)) : 0;
    const sensor = first(cap, 'sensor', 'channel');
    return el('article', { class: 'card cap', 'data-name': cap.name },
      el('h3', {}, el('span', { text: cap.name }), sensor ? el('span', { class: 'key', text: sensor + (cap.basis ? ' · ' + cap.basis + ' temperature' : '') }) : null),
      el('div', { class: 'meter', role: 'meter', 'aria-label': 'consumed life', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': (pct * 100).toFixed(2) },
        el('span', { style: 'width:' + (pct * 100).toFixed(2) + '%' })),
      el('dl', { class: 'facts' }, ...facts.map(([k, v]) => el('div', {}, el('dt', { text: k }), el('dd', {}, v)))),
      why ? el('p', { class: 'why', text: why }) : null,
      el('div', { class: 'cap-charts' }, profileChart(prof, binK), consumedChart(series)),
      relTable,
      warnings.length ? el('ul', { class: 'warnings', 'aria-label': 'warnings' }, ...warnings.map((w) => el('li', { class: 'warn', text: warningText(w) }))) : null);
  }

  async function loadLifetime() {
    const box = $('#capacitors');
    let resp;
    try {
      resp = await api('lifetime');
    } catch (e) {
      if (e.status === 404 || /no capacitor/i.test(e.message)) {
        notice(box, 'No capacitors are configured. Add a capacitors: section to thermlog.yaml naming the temperature channel each capacitor sits in, its rated life and rated temperature, then reload the daemon (see thermlog.yaml(5)).');
      } else {
        handleError(e, box);
      }
      return;
    }
    const caps = asArray(resp, 'capacitors');
    if (!caps.length) {
      notice(box, 'No capacitors are configured. Add a capacitors: section to thermlog.yaml naming the temperature channel each capacitor sits in, its rated life and rated temperature, then reload the daemon (see thermlog.yaml(5)).');
      return;
    }
    // The review's two charts: the profile and the consumed life over the window (heavy, so
    // after the figures; a failure leaves the charts empty, not the cards).
    const [profResp, seriesResp] = await Promise.all([api('lifetime/profile').catch(() => null), api('lifetime/series').catch(() => null)]);
    const byName = (resp) => new Map(asArray(resp || {}, 'capacitors').map((c) => [c.name, c]));
    const profs = byName(profResp), series = byName(seriesResp);
    const binK = profResp && typeof profResp.bin_k === 'number' ? profResp.bin_k : 5;
    box.replaceChildren(el('div', { class: 'caps' }, ...caps.map((c) => renderCapacitor(c, profs.get(c.name), series.get(c.name), binK))),
      el('p', { class: 'muted', text: 'Over the whole stored history; years of 8760 hours.' }));
  }

  /* ---------- runs ---------- */

  const RUN_LIST_MAX = 200; // rows of the runs table; the statistics cover every run
  const STATUSES = ['failed', 'signaled', 'timeout', 'lost', 'running'];
  const isoSeconds = (iso) => (typeof iso === 'string' ? Date.parse(iso) / 1000 : NaN);

  /* "649 attempts, 404 completed, 245 failed; completed runs p50 1627.29 s, ...": as `thermlog runs stats`. */
  function runsSummaryLine(l) {
    let s = l.count + ' attempts, ' + l.ok + ' completed';
    for (const st of STATUSES) {
      if (l[st] > 0 || st === 'failed') s += ', ' + (l[st] || 0) + ' ' + st;
    }
    const d = l.duration_s;
    if (d && d.n > 0) s += '; completed runs p50 ' + d.p50.toFixed(2) + ' s, p95 ' + d.p95.toFixed(2) + ' s, max ' + d.max.toFixed(2) + ' s';
    return s;
  }

  /* A metric's value as the CLI's tables show it: six significant digits. */
  const metricText = (v) => (typeof v === 'number' ? String(Number(v.toPrecision(6))) : '–');

  function runStatusText(r) {
    if (r.status === 'failed' && typeof r.exit_code === 'number') return 'failed (exit ' + r.exit_code + ')';
    if (r.status === 'signaled' && typeof r.signal === 'number') return 'signaled (signal ' + r.signal + ')';
    return r.status;
  }

  const statusClass = (st) => (st === 'ok' ? 'good' : st === 'running' ? '' : st === 'lost' || st === 'timeout' ? 'warn' : 'bad');

  function renderRunLabel(l) {
    const fact = (name, text, field) => el('div', { 'data-field': field }, el('dt', { text: name }), el('dd', { text }));
    const d = l.duration_s || {};
    const e = l.energy_j;
    const t = l.temp_max_c;
    // Which runs the energy figures cover: ok runs only, some partly, some without one.
    const noEnergy = l.energy_not_ok ? 'no ok run has it (' + intFmt.format(l.energy_not_ok) + ' other runs do)' : 'not measured';
    const energyCover = e && e.n && (l.energy_partial || l.energy_missing) ? intFmt.format(e.n) + ' of ' + intFmt.format(l.ok) + ' ok runs' +
      (l.energy_partial ? ', ~' + intFmt.format(l.energy_partial) + ' partly (a daemon restart mid-run)' : '') : '';
    const counts = [fact('Completed', intFmt.format(l.ok), 'ok')];
    for (const st of STATUSES) {
      if (l[st] > 0 || st === 'failed') counts.push(fact(st[0].toUpperCase() + st.slice(1), intFmt.format(l[st] || 0), st));
    }
    return el('section', { class: 'card run-label', 'data-label': l.label },
      el('h3', { text: l.label }),
      el('p', { class: 'summary-line', text: runsSummaryLine(l) }),
      el('dl', { class: 'facts' }, ...counts,
        fact('Duration p50', d.n ? fmtDuration(d.p50) : '–', 'duration p50'),
        fact('Duration p95', d.n ? fmtDuration(d.p95) : '–', 'duration p95'),
        fact('Energy p50', e && e.n ? fmtValue(e.p50, 'joules') : noEnergy, 'energy p50'),
        fact('Energy p95', e && e.n ? fmtValue(e.p95, 'joules') : noEnergy, 'energy p95'),
        ...(energyCover ? [fact('Energy covers', energyCover, 'energy covers')] : []),
        fact('Peak temperature p50', t && t.n ? fmtValue(t.p50, 'celsius') : '–', 'temp p50'),
        ...(l.metrics || []).map((m) => fact(m.name + ' p50', metricText(m.p50) + (m.unit ? ' ' + m.unit : '') +
          ' (' + intFmt.format(m.n) + ' runs)', 'metric ' + m.name))));
  }

  /* The Runs view's campaign: ?campaign=ID in the URL, so a bookmark keeps it. */
  function campaignFromUrl() {
    const id = new URLSearchParams(location.search).get('campaign') || '';
    return /^[1-9][0-9]{0,17}$/.test(id) ? id : '';
  }

  function campaignToUrl(id) {
    const q = new URLSearchParams(location.search);
    if (id) q.set('campaign', id);
    else q.delete('campaign');
    const rest = q.toString();
    history.replaceState(null, '', (rest ? '?' + rest : location.pathname) + location.hash);
  }

  /* "#2 five-tests on B (done, 31 of 31)": a campaign as its list names it. */
  const campaignText = (c) => '#' + c.id + ' ' + c.name + (c.board ? ' on ' + c.board : '') + ' (' + c.status +
    (typeof c.slots === 'number' ? ', ' + c.slots_ended + ' of ' + c.slots : '') + ')';

  /* The campaign list of the Runs view (GET /api/v1/campaigns; hidden when there is none, or
   * from a daemon without it); the chosen campaign, if it is still there. */
  async function loadCampaigns() {
    const form = $('#runs-campaign-form');
    const sel = $('#runs-campaign');
    const list = asArray(await api('campaigns').catch(() => null), 'campaigns');
    sel.replaceChildren(el('option', { value: '', text: 'every run in the window' }),
      ...list.slice().reverse().map((c) => el('option', { value: String(c.id), text: campaignText(c) })));
    const chosen = list.find((c) => String(c.id) === state.campaign) || null;
    sel.value = chosen ? state.campaign : '';
    form.hidden = list.length === 0;
    return chosen;
  }

  async function loadRuns() {
    const labels = $('#runs-labels');
    const tbody = $('#runs-table tbody');
    let stats;
    let list;
    let campaign;
    try {
      campaign = await loadCampaigns();
      // A campaign's runs whenever they ran (its tag selects them), else the window's.
      const params = campaign ? { tag: 'campaign=' + campaign.id } : winParams();
      [stats, list] = await Promise.all([api('runs/stats', params), api('runs', params)]);
    } catch (e) {
      labels.replaceChildren();
      tbody.replaceChildren();
      handleError(e, labels);
      return;
    }
    const per = asArray(stats, 'labels');
    labels.replaceChildren(...(per.length ? per.map(renderRunLabel) :
      [el('p', { class: 'notice', text: 'No runs started in this window. Mark a job with: thermlog run --label NAME -- COMMAND' })]));
    const runs = asArray(list, 'runs').slice().reverse();
    const shown = runs.slice(0, RUN_LIST_MAX);
    $('#runs-list-title').textContent = campaign ? 'Runs of campaign ' + campaignText(campaign) : 'Runs in the window';
    $('#runs-list-note').textContent = runs.length > shown.length ?
      'The newest ' + shown.length + ' of ' + intFmt.format(runs.length) + ' runs; choose a shorter window for the others.' :
      intFmt.format(runs.length) + ' runs, newest first.';
    const td = (name, text, attrs) => el('td', { 'data-label': name, 'data-field': name.toLowerCase(), ...(attrs || {}) }, text);
    tbody.replaceChildren(...shown.map((r) => el('tr', { 'data-id': r.id },
      el('th', { scope: 'row' }, el('a', { href: '#run/' + r.id, text: r.label }), el('span', { class: 'key', text: '#' + r.id })),
      td('Start', fmtTime(isoSeconds(r.start), true)),
      td('Duration', r.status === 'running' ? 'running' : fmtDuration(r.duration_s), { class: 'num' }),
      td('Status', runStatusText(r), { class: statusClass(r.status) }),
      td('Energy', typeof r.energy_j === 'number' ? (partialEnergy(r) ? '~' : '') + fmtValue(r.energy_j, 'joules') : '–',
        partialEnergy(r) ? { class: 'num', title: 'covers ' + fmtPercent(r.energy_coverage, 0) + ' of the run (a daemon restart mid-run)' } : { class: 'num' }),
      td('Peak', fmtValue(r.temp_max_c, 'celsius'), { class: 'num' }),
      td('Tags', Object.entries(r.tags || {}).map(([k, v]) => k + '=' + v).join(' ') || '–'))));
  }

  /* Whether a run's energy covers only part of it (a daemon restart mid-run). */
  function partialEnergy(r) {
    return typeof r.energy_j === 'number' && typeof r.energy_coverage === 'number' && r.energy_coverage < 1;
  }

  /* The residency of one clock: seconds at each frequency, as the statistics' time-in-state tables. */
  function renderResidency(key, r) {
    const c = channelByKey(key);
    const seconds = Object.entries(r.seconds || {}).map(([hz, s]) => ({ hz: Number(hz), s })).sort((a, b) => b.hz - a.hz);
    const total = seconds.reduce((a, x) => a + x.s, 0) || 1;
    const below = typeof r.below_max_share === 'number' ? fmtPercent(r.below_max_share) + ' below ' +
      (r.max_hz_from === 'highest seen' ? 'its highest seen' : 'its maximum') + (r.max_hz ? ' (' + fmtHz(r.max_hz) + ')' : '') : '';
    return el('table', { 'data-key': key },
      el('caption', {}, (c && c.label !== key ? c.label : key), el('span', { class: 'key', text: (r.method || '') + (below ? ' · ' + below : '') })),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Clock' }), el('th', { scope: 'col', class: 'num', text: 'Time' }), el('th', { scope: 'col', text: '', 'aria-hidden': 'true' }))),
      el('tbody', {}, ...seconds.map((x) => el('tr', {},
        el('td', { class: 'num', text: fmtHz(x.hz) }),
        el('td', { class: 'num', 'data-value': x.s, text: fmtDuration(x.s) }),
        el('td', { style: 'width:40%' }, el('div', { class: 'bar', style: 'width:' + (x.s / total * 100).toFixed(1) + '%' }))))));
  }

  /* A run's throttling (the episodes clipped to it): its share and, per domain, time and depth. */
  function runThrottleText(t) {
    if (!t) return ['not known', 'no episode record covers the run'];
    if (!t.share) return ['no', 'no domain was capped during the run'];
    return [fmtPercent(t.share) + ' of the run', t.domains.filter((d) => d.throttled_s > 0).map((d) =>
      d.domain + ' ' + fmtDuration(d.throttled_s) + (d.min_hz ? ' down to ' + fmtValue(d.min_hz, 'hertz') : '')).join(' · ')];
  }

  /* Mean and p95 busy share of all CPUs during the run, and each cluster's mean. */
  function runCpuLoadText(load) {
    const c = load && load.cpu;
    if (!c) return ['not measured', ''];
    return [c.mean_pct.toFixed(1) + ' % mean, ' + c.p95_pct.toFixed(1) + ' % p95',
      (load.clusters || []).map((k) => 'CPU ' + k.cpus + ' ' + k.mean_pct.toFixed(1) + ' %').join(' · ')];
  }

  /* How many NPU cores did work (a mean busy share of at least 1 %), and each core's mean. */
  function runNpuText(load) {
    const npu = load && load.npu;
    if (!npu || !npu.length) return ['not measured', ''];
    const used = npu.filter((c) => c.mean_pct >= 1).length;
    return [used + ' of ' + npu.length, npu.map((c) => c.core + ' ' + c.mean_pct.toFixed(1) + ' % mean').join(' · ')];
  }

  /* Where a run's peak temperature was read: its channel and when (figures.peak of a recorded
   * run, else the hottest fast sample of its window, the run's `peak`). */
  function runPeakText(r) {
    const fp = (r.figures || {}).peak;
    const p = fp ? { channel: fp.channel, at: fp.max_at } : r.peak ? { channel: r.peak.channel, at: r.peak.time } : null;
    if (!p || !p.channel) return '';
    const at = typeof p.at === 'string' ? isoSeconds(p.at) : p.at;
    return p.channel + (typeof at === 'number' && isFinite(at) ? ' at ' + fmtTime(at, true) : '');
  }

  /* A run's own numbers (THERMLOG_METRICS, --metric, runs metric, a job log's metric: columns). */
  function renderRunMetrics(metrics) {
    const rows = Object.entries(metrics || {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const table = $('#run-metrics');
    table.hidden = !rows.length;
    table.tBodies[0].replaceChildren(...rows.map(([name, m]) => el('tr', { 'data-metric': name },
      el('th', { scope: 'row', text: name }),
      el('td', { class: 'num', 'data-value': m.value, text: metricText(m.value) }),
      el('td', { text: m.unit || '' }))));
    $('#run-metrics-note').textContent = rows.length ? '' :
      'No metrics: the command wrote none to $THERMLOG_METRICS, and none was given with --metric or thermlog runs metric.';
  }

  async function loadRun() {
    const id = state.runId;
    const facts = $('#run-facts');
    const box = $('#run-chart');
    let shown;
    let samples;
    try {
      [shown, samples] = await Promise.all([api('runs/' + id), api('runs/' + id + '/samples', { max_points: CHART_POINTS }), loadDygraphs()]);
    } catch (e) {
      facts.replaceChildren();
      handleError(e, box);
      return;
    }
    const r = shown.run;
    $('#run-title').textContent = r.label + ' #' + r.id;
    const fact = (name, text, sub) => el('div', {}, el('dt', { text: name }), el('dd', {}, text, sub ? el('span', { class: 'hours', text: sub }) : null));
    const fig = r.figures || {};
    const energy = fig.energy || {};
    const power = typeof r.energy_j === 'number' && r.duration_s > 0 ? fmtValue(r.energy_j / r.duration_s, 'watts') + ' mean' : '';
    const tags = Object.entries(r.tags || {}).map(([k, v]) => k + '=' + v).join(', ');
    facts.replaceChildren(
      fact('Status', runStatusText(r)),
      fact('Start', fmtTime(isoSeconds(r.start), true)),
      fact('End', r.end ? fmtTime(isoSeconds(r.end), true) : 'running'),
      fact('Duration', typeof r.duration_s === 'number' ? fmtDuration(r.duration_s) : '–', typeof r.duration_s === 'number' ? r.duration_s.toFixed(3) + ' s' : ''),
      fact('Energy', typeof r.energy_j === 'number' ? (partialEnergy(r) ? '~' : '') + fmtValue(r.energy_j, 'joules') +
        (partialEnergy(r) ? ' (partial: a daemon restart mid-run)' : '') : 'not measured',
        [r.energy_method, typeof r.energy_coverage === 'number' ? fmtPercent(r.energy_coverage, 0) + ' covered' : '', power, energy.channel].filter(Boolean).join(' · ')),
      fact('Peak temperature', fmtValue(r.temp_max_c, 'celsius'), runPeakText(r)),
      fact('Throttled', ...runThrottleText(r.throttle)),
      fact('CPU load', ...runCpuLoadText(fig.load)),
      fact('NPU cores used', ...runNpuText(fig.load)),
      fact('Peak RSS', typeof r.rss_max_bytes === 'number' ? fmtBytes(r.rss_max_bytes) : '–'),
      fact('Tags', tags || 'none'));
    renderRunMetrics(r.metrics);
    // The chart: temperatures left, clocks right (GHz), from every stride-th fast sample.
    const list = asArray(samples, 'samples');
    const keys = [];
    for (const s of list) for (const k of Object.keys(s.values)) if (!keys.includes(k)) keys.push(k);
    const chans = keys.map((k) => channelByKey(k) || { key: k, label: k }).filter((c) => isTemp(c) || isClock(c));
    $('#run-chart-note').textContent = list.length ?
      intFmt.format(samples.fast_samples) + ' fast samples' + (samples.stride > 1 ? ', every ' + samples.stride + 'th drawn' : '') + '.' :
      'This run has no fast samples (imported, or from the demo\'s older history): see its window in History.';
    if (!list.length || !chans.length) {
      if (state.charts['run-chart']) {
        state.charts['run-chart'].destroy();
        delete state.charts['run-chart'];
      }
      box.replaceChildren();
      $('#run-legend').textContent = '';
      box.dataset.points = 0;
    } else {
      const labels = ['Time'];
      const clocks = [];
      for (const c of chans) {
        const name = c.label === c.key ? c.key : c.label;
        labels.push(labels.includes(name) ? c.key : name);
        if (isClock(c)) clocks.push(labels[labels.length - 1]);
      }
      const data = list.map((s) => [new Date(Date.parse(s.time)), ...chans.map((c) => {
        const v = s.values[c.key];
        return typeof v === 'number' ? v * (isClock(c) ? 1e-9 : 1) : null;
      })]);
      box.replaceChildren();
      drawChart('run-chart', labels, data, { clocks, keys: chans.map((c) => c.key), legend: 'run-legend', xLabelWidth: 72 });
      box.dataset.points = data.length;
    }
    const res = fig.residency || {};
    const blocks = Object.entries(res).filter(([, v]) => v && v.seconds && Object.keys(v.seconds).length).map(([k, v]) => renderResidency(k, v));
    $('#run-residency-note').textContent = blocks.length ?
      'Time at each frequency during the run, per CPU cluster and devfreq device (NPU, GPU, memory), with the method of each.' : '';
    $('#run-residency').replaceChildren(...(blocks.length ? blocks :
      [el('p', { class: 'notice', text: 'No residency figures: the run was imported, or ended before the daemon measured clocks.' })]));
  }

  /* ---------- views ---------- */

  const LOADERS = {
    overview: loadOverview,
    statistics: loadStatistics,
    history: async () => {
      await loadHistory();
      await loadPeak();
    },
    runs: loadRuns,
    run: loadRun,
    lifetime: loadLifetime,
  };

  async function showView(view, force) {
    // A run's page is #run/ID; it keeps the window for the way back to the list.
    const m = /^run\/([1-9][0-9]{0,17})$/.exec(view || '');
    if (m) {
      view = 'run';
      state.runId = m[1];
    }
    if (!LOADERS[view] || (view === 'run' && !state.runId)) view = 'overview';
    state.view = view;
    $('#window-form').hidden = view === 'lifetime' || view === 'run';
    for (const v of Object.keys(LOADERS)) {
      $('#view-' + v).hidden = v !== view;
      const link = $('nav a[data-view="' + v + '"]');
      if (!link) continue;
      if (v === view || (v === 'runs' && view === 'run')) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    const key = view === 'lifetime' ? 'all' : view === 'run' ? 'run-' + state.runId :
      view === 'runs' && state.campaign ? 'campaign-' + state.campaign : winKey();
    if (!force && state.loaded[view] === key) return;
    state.loaded[view] = key;
    document.body.dataset.loading = view;
    try {
      await LOADERS[view]();
    } catch (e) {
      handleError(e, $('#view-' + view));
    } finally {
      if (document.body.dataset.loading === view) delete document.body.dataset.loading;
      document.body.dataset.ready = view + ':' + key;
    }
  }

  function setWindow(win, toUrl) {
    state.win = win;
    if (toUrl) windowToUrl(win);
    banner('');
    showWindow();
    for (const v of Object.keys(state.loaded)) if (v !== 'lifetime' && v !== 'run') delete state.loaded[v];
  }

  async function start() {
    clearTimeout(state.retryTimer);
    try {
      const [status, channels] = await Promise.all([api('status'), api('channels')]);
      banner('');
      state.status = status;
      renderStatus(status);
      state.channels = asArray(channels, 'channels').map(normChannel);
    } catch (e) {
      $('#status-list').replaceChildren(el('div', {}, el('dt', { text: 'State' }), el('dd', { class: 'bad', text: 'not answering' })));
      handleError(e, $('#groups'));
      return;
    }
    if (!state.win) setWindow(windowFromUrl() || resolveWindow(), false);
    await showView((location.hash || '#overview').slice(1));
    clearInterval(state.refreshTimer);
    const interval = Math.max(10, first(state.status, 'interval_s', 'interval') || 30);
    state.refreshTimer = setInterval(() => {
      if (state.view === 'overview' && !document.hidden) refreshLive();
    }, interval * 1000);
  }

  function init() {
    const sel = $('#window-select');
    const custom = $('#custom-range');
    sel.addEventListener('change', () => {
      custom.hidden = sel.value !== 'custom';
      if (sel.value === 'custom') {
        const w = state.win || resolveWindow();
        $('#window-from').value = toLocalInput(w.from);
        $('#window-to').value = toLocalInput(w.to);
        return;
      }
      setWindow(resolveWindow(), true);
      showView(state.view);
    });
    $('#window-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const w = resolveWindow();
      if (!w) {
        banner('The custom range needs a start before its end.');
        return;
      }
      setWindow(w, true);
      showView(state.view);
    });
    $('#refresh').addEventListener('click', () => {
      if (sel.value !== 'custom') setWindow(resolveWindow(), false);
      state.loaded = {};
      start();
    });
    $('#copy-md').addEventListener('click', copyMarkdown);
    $('#peak-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      loadPeak();
    });
    $('#show-clocks').addEventListener('change', () => showView('history', true));
    $('#runs-campaign').addEventListener('change', (ev) => {
      state.campaign = ev.target.value;
      campaignToUrl(state.campaign);
      showView('runs', true);
    });
    window.addEventListener('hashchange', () => showView(location.hash.slice(1)));
    start();
  }

  init();
})();
