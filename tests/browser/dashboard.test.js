'use strict';
/*
 * The dashboard in Debian's chromium against a running thermlogd --demo: every view shows what
 * the JSON API says for the same window, the chart draws, the CSV download equals the export,
 * the Report buttons download /api/v1/report for the window shown,
 * and the console stays clean. Prints TAP; saves screenshots of each view (desktop and phone).
 * usage: node dashboard.test.js URL SCREENSHOT_DIR PROFILE_DIR [TOKEN_URL TOKEN]
 * (TOKEN_URL: a daemon with http.token = TOKEN, for the sign-in form)
 */
const fs = require('fs');
const path = require('path');
const http = require('http');
const zlib = require('zlib');
const { ok, done, bailOut, launch } = require('./tap');

const [base, shotDir, profileDir, tokenUrl, token] = process.argv.slice(2);
if (!base || !shotDir || !profileDir) {
  console.error('usage: node dashboard.test.js URL SCREENSHOT_DIR PROFILE_DIR');
  process.exit(2);
}

const diag = (s) => console.log('# ' + s);

/* Plain GET with no decoding, so tests see exactly what the server sends. */
function get(urlPath, headers) {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(urlPath, base), { headers: headers || {} }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.setTimeout(20000, () => req.destroy(new Error('timeout: ' + urlPath)));
  });
}
async function getJson(urlPath) {
  const r = await get(urlPath, { Accept: 'application/json' });
  if (r.status !== 200) throw new Error(urlPath + ': HTTP ' + r.status + ' ' + r.body.toString().slice(0, 200));
  return JSON.parse(r.body.toString());
}

async function waitReady(page, view, notKey) {
  await page.waitForFunction(([v, k]) => {
    const r = document.body.dataset.ready || '';
    return r.startsWith(v + ':') && r !== k && !document.body.dataset.loading;
  }, [view, notKey || ''], { timeout: 30000 });
  return page.evaluate(() => document.body.dataset.ready);
}

async function gotoView(page, view) {
  const before = await page.evaluate(() => document.body.dataset.ready || '');
  await page.click('nav a[data-view="' + view + '"]');
  // Views already loaded for the window keep their ready mark; wait for the view to show.
  await page.waitForSelector('#view-' + view + ':not([hidden])');
  if (!before.startsWith(view + ':')) await waitReady(page, view);
  await page.waitForTimeout(200);
}

/* Non-background pixels sampled over every canvas of a chart. */
function inkedPixels(page, sel) {
  return page.evaluate((s) => {
    let inked = 0;
    const colors = new Set();
    for (const c of document.querySelectorAll(s + ' canvas')) {
      if (!c.width || !c.height) continue;
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      for (let i = 0; i < data.length; i += 4 * 7) {
        if (data[i + 3] > 0) {
          inked++;
          colors.add((data[i] >> 4) + ',' + (data[i + 1] >> 4) + ',' + (data[i + 2] >> 4));
        }
      }
    }
    return { inked, colors: colors.size };
  }, sel);
}

/*
 * Elements that stick out of the viewport, and boxes whose content is wider than the box (text
 * clipped by a cell or a hidden-overflow container, or a table scrolling sideways in its wrap).
 */
function overflows(page) {
  return page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const bad = [];
    const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : '') +
      (e.closest('[data-key]') ? ' in ' + e.closest('[data-key]').dataset.key : '') + ' "' + (e.textContent || '').trim().slice(0, 30) + '"';
    if (document.documentElement.scrollWidth > vw) bad.push('the page is ' + document.documentElement.scrollWidth + ' px wide in ' + vw);
    for (const e of document.querySelectorAll('body *')) {
      if (e.closest('.visually-hidden, .dygraph-legend, canvas')) continue;
      const r = e.getBoundingClientRect();
      if (!r.width || !r.height) continue; // not rendered (hidden view, closed details)
      const cs = getComputedStyle(e);
      if (r.right > vw + 0.5 || r.left < -0.5) {
        bad.push(name(e) + ' spans ' + r.left.toFixed(0) + '..' + r.right.toFixed(0) + ' px');
      } else if (cs.display !== 'inline' && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && !['SELECT', 'INPUT', 'TEXTAREA'].includes(e.tagName)) {
        bad.push(name(e) + ' clips: ' + e.scrollWidth + ' px of content in ' + e.clientWidth);
      }
    }
    return bad;
  });
}

/* WCAG contrast ratio of two computed colours "rgb(r, g, b)". */
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/*
 * A day ending 10 minutes before the test started (so before the demo started), and before the
 * start of a run still under way (a run the demo was in the middle of when it started goes on
 * live, and may have begun before that): its runs were all stored, ended, before the demo
 * printed its URL (backfilled, or replayed with fast samples), and the live runs start later,
 * so the page and the API see the same runs however long the test takes. A window ending now
 * would race the demo: a run that starts or ends between the API's answer and the page's shows
 * in one of them only.
 */
async function pinnedWindow() {
  let to = Math.floor((Date.now() / 1000 - 600) / 60) * 60;
  const recent = (await getJson('/api/v1/runs?from=-1d')).runs;
  for (const r of recent.filter((x) => x.status === 'running')) {
    to = Math.min(to, Math.floor(Date.parse(r.start) / 1000 / 60) * 60);
  }
  return { from: to - 86400, to };
}

/* The demo's workload in the Runs view, on a run's page and shaded on the History chart. */
async function runsViews(ctx, win) {
  const q = '?from=' + win.from + '&to=' + win.to;
  const page = await ctx.newPage();
  await page.goto(base + q + '#history');
  await waitReady(page, 'history');
  await page.waitForSelector('#history-chart[data-runs]', { state: 'attached' });
  const stats = await getJson('/api/v1/runs/stats' + q);
  const list = (await getJson('/api/v1/runs' + q)).runs;
  ok(list.length > 20, 'the demo has runs in the window (' + list.length + ')');
  ok(list.every((r) => r.status !== 'running'), 'the pinned window holds ended runs only', list.filter((r) => r.status === 'running').map((r) => r.id));
  const historyRuns = await page.$eval('#history-chart', (b) => Number(b.dataset.runs));
  ok(historyRuns === list.length, 'History shades every run of the window (' + historyRuns + ')');
  await gotoView(page, 'runs');
  const cards = await page.$$eval('#runs-labels [data-label]', (cs) => cs.map((c) => ({ label: c.dataset.label, text: c.textContent })));
  ok(cards.length === stats.labels.length && cards.length >= 2, 'a card per label', cards.map((c) => c.label));
  for (const l of stats.labels) {
    const card = cards.find((c) => c.label === l.label);
    if (!ok(card, 'card for ' + l.label)) continue;
    const line = l.count + ' attempts, ' + l.ok + ' completed, ' + l.failed + ' failed; completed runs p50 ' +
      l.duration_s.p50.toFixed(2) + ' s, p95 ' + l.duration_s.p95.toFixed(2) + ' s, max ' + l.duration_s.max.toFixed(2) + ' s';
    ok(card.text.includes(line), l.label + ': the summary line "' + line + '"', card.text.slice(0, 300));
    const kj = (j) => (j >= 1000 ? (j / 1000).toFixed(2) + ' kJ' : j.toFixed(1) + ' J');
    ok(l.energy_j && card.text.includes(kj(l.energy_j.p50)) && card.text.includes(kj(l.energy_j.p95)),
      l.label + ': energy p50 and p95 (' + (l.energy_j ? kj(l.energy_j.p50) : 'none') + ')');
    // Each duration by the one rule (testDurations): 1535 s and 1550 s are 25.6 and 25.8 min,
    // never both "26 min"; under 10 min the seconds stay.
    for (const k of ['p50', 'p95']) {
      const want = fmtDuration(l.duration_s[k]);
      const got = await page.textContent('#runs-labels [data-label="' + l.label + '"] [data-field="duration ' + k + '"] dd');
      ok(got === want, l.label + ': duration ' + k + ' ' + l.duration_s[k] + ' s reads "' + want + '"', got);
    }
  }
  const rows = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => Number(tr.dataset.id)));
  const newest = list.slice().reverse().slice(0, 200).map((r) => r.id);
  ok(JSON.stringify(rows) === JSON.stringify(newest), 'the table lists the newest runs first (' + rows.length + ')');
  // The newest ended run that has fast samples: the demo replays its last hours.
  let shown = null;
  for (const r of list.slice().reverse()) {
    if (r.status === 'running') continue;
    const one = (await getJson('/api/v1/runs/' + r.id)).run;
    if (one.fast_samples > 0 && one.figures) {
      shown = one;
      break;
    }
  }
  if (!ok(shown, 'a run with fast samples and figures')) return;
  await page.click('#runs-table tbody tr[data-id="' + shown.id + '"] a');
  await waitReady(page, 'run');
  await page.waitForSelector('#run-chart canvas');
  ok(page.url().endsWith('#run/' + shown.id), 'the run has its own address', page.url());
  const samples = await getJson('/api/v1/runs/' + shown.id + '/samples?max_points=480');
  const points = await page.$eval('#run-chart', (b) => Number(b.dataset.points));
  ok(points === samples.samples.length && points > 0, 'the run chart draws its fast samples (' + points + ')');
  const ink = await inkedPixels(page, '#run-chart');
  ok(ink.inked > 1000 && ink.colors > 4, 'run chart canvas is not blank', ink);
  const axes = await page.$$eval('#run-axes [data-axis]', (es) => es.filter((e) => !e.hidden).map((e) => e.dataset.axis));
  ok(axes.join() === 'y,y2', 'the run chart has temperatures and clocks (two axes)', axes);
  const facts = await page.textContent('#run-facts');
  ok(facts.includes((shown.energy_j / 1000).toFixed(2) + ' kJ') || facts.includes(shown.energy_j.toFixed(1) + ' J'),
    'the run page shows its energy', facts);
  ok(facts.includes(shown.energy_method), 'and its method ' + shown.energy_method);
  // Its peak temperature names the channel it was read on (figures.peak, else the run's peak).
  const pk = shown.figures.peak || shown.peak;
  const peakFact = await page.$$eval('#run-facts div', (ds) => (ds.find((d) => d.querySelector('dt').textContent === 'Peak temperature') || { textContent: '' }).textContent);
  ok(pk && peakFact.includes(pk.channel), 'the run page names its peak\'s channel (' + (pk && pk.channel) + ')', peakFact);
  // Its throttling, from the episodes clipped to it, and its load, as the API gives them.
  const thr = shown.throttle;
  const thrText = !thr ? 'not known' : thr.share ? (thr.share * 100).toFixed(1) + ' % of the run' : 'no domain was capped';
  ok(thr && facts.includes(thrText) && (!thr.share || thr.domains.every((d) => !d.throttled_s || facts.includes(d.domain))),
    'the run page shows its throttled share (' + thrText + ') and each throttled domain', facts);
  const cores = shown.figures.load && shown.figures.load.npu;
  const npuText = cores ? cores.filter((c) => c.mean_pct >= 1).length + ' of ' + cores.length : 'not measured';
  ok(facts.includes('NPU cores used' + npuText), 'the run page shows the NPU cores used (' + npuText + ')', facts);
  const bars = await page.$$eval('#run-residency table[data-key]', (ts) => ts.map((t) => ({ key: t.dataset.key, rows: t.querySelectorAll('tbody tr').length })));
  const want = Object.keys(shown.figures.residency).filter((k) => Object.keys(shown.figures.residency[k].seconds || {}).length);
  ok(bars.length === want.length && bars.some((b) => b.key === 'devfreq/fdab0000.npu') && bars.some((b) => b.key === 'cpufreq/policy4'),
    'residency bars per cluster and the NPU', bars);
  const npu = shown.figures.residency['devfreq/fdab0000.npu'];
  const caption = await page.textContent('#run-residency table[data-key="devfreq/fdab0000.npu"] caption');
  ok(npu.max_hz_from !== 'highest seen' && caption.includes('below its maximum (') && !caption.includes('highest seen'),
    'the NPU\'s residency is against its hardware maximum', caption);
  await page.goBack();
  await page.waitForSelector('#view-runs:not([hidden])');
  await page.close();
}

/*
 * Every view at phone widths, light and dark: nothing overflows sideways, the chart's axis
 * titles and tick labels stay readable. Screenshots of each.
 */
async function phoneViews(ctx) {
  for (const scheme of ['light', 'dark']) {
    for (const width of [360, 390]) {
      const page = await ctx.newPage();
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: 800 });
      await page.goto(base + '#overview');
      await waitReady(page, 'overview');
      await page.waitForSelector('#groups svg.spark');
      for (const view of ['overview', 'statistics', 'history', 'runs', 'run', 'lifetime']) {
        if (view === 'run') {
          // The newest run in the table: usually with fast samples and residency, but one
          // that has just started has none yet, so wait for what the page draws of it.
          await page.click('#runs-table tbody tr:first-child a');
          await waitReady(page, 'run');
          await page.waitForFunction(() => document.querySelector('#run-chart').dataset.points !== undefined);
        } else if (view !== 'overview') await gotoView(page, view);
        if (view === 'history') {
          await page.waitForSelector('#peak-chart canvas');
          await page.click('#series-choice summary');
        }
        const bad = await overflows(page);
        ok(bad.length === 0, `${scheme} ${width} px: ${view} has no horizontal overflow or clipped text`, bad.slice(0, 12).join('\n'));
        if (view === 'history') {
          const titles = await page.$$eval('#history-axes [data-axis]', (es) => es.map((e) => {
            const r = e.getBoundingClientRect();
            return { axis: e.dataset.axis, text: e.textContent, size: parseFloat(getComputedStyle(e).fontSize), shown: r.width > 0 && r.right <= document.documentElement.clientWidth };
          }));
          ok(titles.length === 2 && titles.every((t) => t.shown && t.size >= 12) && /°C/.test(titles[0].text) && /GHz/.test(titles[1].text),
            `${scheme} ${width} px: the chart's axis titles (°C, GHz) are shown at 12 px or more`, titles);
          const ticks = await page.$$eval('#history-chart .dygraph-axis-label', (es) => es.map((e) => ({
            color: getComputedStyle(e).color,
            bg: getComputedStyle(document.querySelector('#history-chart').closest('.chart-box')).backgroundColor,
            size: parseFloat(getComputedStyle(e).fontSize),
          })));
          const worst = ticks.length ? Math.min(...ticks.map((t) => contrast(t.color, t.bg))) : 0;
          ok(ticks.length > 4 && worst >= 4.5 && ticks.every((t) => t.size >= 11), `${scheme} ${width} px: tick labels contrast ${worst.toFixed(1)}:1 (want 4.5) at 11 px or more`, ticks.slice(0, 3));
        }
        await page.screenshot({ path: path.join(shotDir, `${scheme}-${view}-${width}.png`), fullPage: true });
      }
      await page.close();
    }
  }
}

async function screenshots(ctx, name) {
  for (const [label, width, height] of [['desktop', 1280, 900]]) {
    const page = await ctx.newPage();
    await page.setViewportSize({ width, height });
    await page.goto(base + '#overview');
    await waitReady(page, 'overview');
    await page.waitForSelector('#groups svg.spark');
    for (const view of ['overview', 'statistics', 'history', 'runs', 'run', 'lifetime']) {
      if (view === 'run') {
        await page.click('#runs-table tbody tr:first-child a');
        await waitReady(page, 'run');
        // The newest run may have just started (no fast sample yet): wait for the page to
        // have drawn what the run has, a chart or the note that it has none.
        await page.waitForFunction(() => document.querySelector('#run-chart').dataset.points !== undefined);
      } else if (view !== 'overview') await gotoView(page, view);
      if (view === 'history') await page.waitForSelector('#peak-chart canvas');
      await page.screenshot({ path: path.join(shotDir, `${name}-${view}-${label}.png`), fullPage: true });
    }
    await page.close();
  }
}

/* The History chart's series: a readable default set, the user's choice kept across visits. */
async function seriesChoice(ctx, channels) {
  const page = await ctx.newPage();
  await page.goto(base + '#history');
  await waitReady(page, 'history');
  await page.waitForSelector('#history-chart canvas');
  await page.evaluate(() => localStorage.removeItem('thermlog.series'));
  await page.reload();
  await waitReady(page, 'history');
  await page.waitForSelector('#series-list input', { state: 'attached' });
  const checked = () => page.$$eval('#series-list input', (is) => is.filter((i) => i.checked).map((i) => i.dataset.key).sort());
  const want = channels.filter((c) => c.key.startsWith('thermal/') || c.key.startsWith('cpufreq/') || /^devfreq\/.*npu/.test(c.key)).map((c) => c.key).sort();
  const got = await checked();
  ok(JSON.stringify(got) === JSON.stringify(want), 'History shows the thermal zones and the CPU and NPU clocks by default (' + got.length + ' series)', { got, want });
  const visible = await page.evaluate(() => {
    const g = window.thermlogCharts && window.thermlogCharts['history-chart'];
    return g ? g.thermlogKeys.filter((k, i) => g.visibility()[i]).sort() : null;
  });
  ok(JSON.stringify(visible) === JSON.stringify(want), 'the chart draws exactly the default series', visible);
  // Switch the memory clock on and a zone off: both survive a reload.
  await page.click('#series-choice summary');
  await page.check('#series-list input[data-key="devfreq/dmc"]');
  await page.uncheck('#series-list input[data-key="thermal/soc-thermal"]');
  await page.reload();
  await waitReady(page, 'history');
  await page.waitForSelector('#series-list input', { state: 'attached' });
  const after = await checked();
  ok(after.includes('devfreq/dmc') && !after.includes('thermal/soc-thermal') && after.length === want.length,
    'the series choice is remembered across a reload', after);
  await page.evaluate(() => localStorage.removeItem('thermlog.series'));
  await page.close();
}

/*
 * Throttling: the Overview card shows each domain of the page's own /api/v1/throttle answer
 * (the demo's big cores, throttled by its sdxl-image runs), History shades the episodes of the
 * window in red, distinct from the runs' grey, and offers the load channels as series.
 */
async function throttleViews(ctx, win) {
  const page = await ctx.newPage();
  let seen = null;
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.pathname.endsWith('/api/v1/throttle') && u.searchParams.get('episodes') === 'open' && r.status() === 200) seen = r.json();
  });
  await page.goto(base + '#overview');
  await waitReady(page, 'overview');
  await page.waitForSelector('#throttle-card[data-episodes]', { state: 'attached' });
  const answer = seen ? await seen : null;
  ok(answer, 'the Overview asked /api/v1/throttle?episodes=open');
  const rows = await page.$$eval('#throttle-table tbody tr', (trs) => trs.map((tr) => {
    const v = {};
    for (const td of tr.querySelectorAll('td[data-label]')) v[td.dataset.label] = { value: td.dataset.value, text: td.textContent };
    return { domain: tr.dataset.domain, now: tr.dataset.now, v };
  }));
  const doms = answer ? answer.domains : [];
  // A day of the demo has busy 4-hour blocks but for about 1 in 64: then the card says so.
  if (doms.length === 0) {
    const note = await page.textContent('#throttle-note');
    ok(/No frequency domain was throttled/.test(note), 'a day without throttling says so', note);
  } else {
    ok(doms.length === 2 && doms.every((d) => /^cpufreq\/policy[46]$/.test(d.domain) && d.episodes >= 1),
      'the demo throttled both big-core policies in the last 24 hours', doms);
  }
  const diffs = [];
  for (const d of doms) {
    const r = rows.find((x) => x.domain === d.domain);
    if (!r) {
      diffs.push(d.domain + ': no row');
      continue;
    }
    const mhz = (v) => (v / 1e6).toFixed(0) + ' MHz';
    if (r.v.Episodes.value !== String(d.episodes)) diffs.push(d.domain + ' episodes ' + r.v.Episodes.value);
    if (r.v.Throttled.value !== String(d.throttled_s)) diffs.push(d.domain + ' throttled ' + r.v.Throttled.value);
    if (r.v.Share.value !== String(d.share) || r.v.Share.text !== (d.share * 100).toFixed(1) + ' %') diffs.push(d.domain + ' share ' + r.v.Share.text);
    if (r.v['Deepest cap'].text !== mhz(d.min_hz) + ' of ' + mhz(d.max_hz)) diffs.push(d.domain + ' cap ' + r.v['Deepest cap'].text);
    const open = answer.episodes.find((e) => e.domain === d.domain && !e.end);
    if ((r.now === 'throttled') !== !!open || (open && !r.v.Now.text.includes(open.cause))) diffs.push(d.domain + ' now ' + r.v.Now.text);
  }
  ok(rows.length === doms.length && diffs.length === 0, 'the Throttling card shows each domain as the API answered: episodes, throttled time, share, deepest cap, now', { diffs, rows });

  // History over a pinned window: the episodes shaded, red on top where runs are grey (the
  // week before it when its day had no episode).
  let q = '?from=' + win.from + '&to=' + win.to;
  let eps = (await getJson('/api/v1/throttle' + q)).episodes;
  if (eps.length === 0) {
    win = { from: win.to - 7 * 86400, to: win.to };
    q = '?from=' + win.from + '&to=' + win.to;
    eps = (await getJson('/api/v1/throttle' + q)).episodes;
  }
  const runs = (await getJson('/api/v1/runs' + q)).runs;
  // History on a window, its chart drawn with the window's episodes
  const openHistory = async (query) => {
    await page.goto(base + query + '#history');
    await waitReady(page, 'history');
    await page.waitForSelector('#history-chart[data-throttle]', { state: 'attached' });
  };
  await openHistory(q);
  const shaded = await page.$eval('#history-chart', (b) => Number(b.dataset.throttle));
  ok(eps.length >= 2 && shaded === eps.length, 'History shades every throttle episode of the window (' + shaded + ' of ' + eps.length + ')');
  const inside = (t, list) => list.some((x) => Date.parse(x.start) <= t && t < Date.parse(x.end || x.last_seen));
  const e0 = eps.find((e) => e.end && Date.parse(e.start) > win.from * 1000);
  // The longest reranker run outside every episode.
  const span = (r) => Date.parse(r.end) - Date.parse(r.start);
  const runOnly = runs.filter((r) => r.label === 'reranker' && r.end && !inside((Date.parse(r.start) + Date.parse(r.end)) / 2, eps))
    .sort((a, b) => span(b) - span(a))[0];
  // The pixel in the row 2 px under the top of the plot at time ms (one readback: more would
  // warn in the console).
  const pixelAt = (ms) => page.evaluate((t) => {
    const g = window.thermlogCharts['history-chart'];
    const area = g.getArea();
    const c = g.hidden_;
    const ratio = c.width / c.getBoundingClientRect().width;
    const row = c.getContext('2d').getImageData(0, Math.round((area.y + 2) * ratio), c.width, 1).data;
    const x = Math.round(g.toDomXCoord(t) * ratio);
    return [row[4 * x], row[4 * x + 1], row[4 * x + 2], row[4 * x + 3]];
  }, ms);
  const [r1, g1, b1, a1] = await pixelAt(e0 ? (Date.parse(e0.start) + Date.parse(e0.end)) / 2 : 0);
  ok(e0 && a1 > 100 && r1 > g1 + 60 && r1 > b1 + 60, 'an episode is a red strip along the top of the chart', [r1, g1, b1, a1]);
  const note = await page.textContent('#history-runs');
  ok(note.includes(eps.length + ' throttle episodes'), 'the note under the title counts the episodes', note);
  // The run's column, on a window three runs wide around it (on the week's it may be under a
  // pixel and fall between two).
  if (runOnly) {
    const w = Math.ceil(span(runOnly) / 1000);
    await openHistory('?from=' + (Math.floor(Date.parse(runOnly.start) / 1000) - w) + '&to=' +
      (Math.ceil(Date.parse(runOnly.end) / 1000) + w));
  }
  const [r2, g2, b2, a2] = runOnly ? await pixelAt((Date.parse(runOnly.start) + Date.parse(runOnly.end)) / 2) : [];
  ok(runOnly && a2 > 0 && b2 >= r2 && !(r2 > g2 + 60), "a run without throttling stays grey there: the two shadings differ", [r2, g2, b2, a2]);
  await openHistory(q);

  // Load: each CPU (with its cluster) and NPU core is a series to choose, in percent.
  await page.evaluate(() => localStorage.removeItem('thermlog.series'));
  await page.click('#series-choice summary');
  const loadInputs = await page.$$eval('#series-list input[data-key^="load/"]', (is) => is.map((i) => ({
    key: i.dataset.key, checked: i.checked, label: i.closest('label').textContent })));
  const want = ['load/cpu', 'load/cpu0', 'load/cpu4', 'load/cpu6', 'load/rknpu/core0', 'load/rknpu/core1', 'load/rknpu/core2'];
  ok(want.every((k) => loadInputs.some((i) => i.key === k)) && loadInputs.every((i) => !i.checked),
    'History offers the load channels as series, off by default', loadInputs);
  const l4 = loadInputs.find((i) => i.key === 'load/cpu4');
  const n0 = loadInputs.find((i) => i.key === 'load/rknpu/core0');
  ok(l4 && l4.label === 'cpu4 load (CPU 4-5)' && n0 && n0.label === 'NPU core 0 load', 'a CPU\'s series names its cluster; an NPU core\'s its core', [l4, n0]);
  const titleBefore = await page.textContent('#history-axes [data-axis="y"]');
  ok(!/load/.test(titleBefore), 'without a load series the left axis is the temperatures\'', titleBefore);
  await page.check('#series-list input[data-key="load/cpu4"]');
  await page.check('#series-list input[data-key="load/rknpu/core0"]');
  const chosen = await page.evaluate(() => {
    const g = window.thermlogCharts['history-chart'];
    const vis = g.visibility();
    const i4 = g.thermlogKeys.indexOf('load/cpu4');
    const fmt = g.getOptionForAxis('valueFormatter', 'y');
    return { cpu4: vis[i4], npu: vis[g.thermlogKeys.indexOf('load/rknpu/core0')], text: fmt(41, null, g.getLabels()[i4 + 1]), temp: fmt(61, null, g.getLabels()[1]),
      axis: document.querySelector('#history-axes [data-axis="y"]').textContent };
  });
  ok(chosen.cpu4 && chosen.npu && chosen.text === '41.0 %' && chosen.temp === '61.0 °C' && /load \(%\)/.test(chosen.axis),
    'chosen, the load series draw on the left axis in percent', chosen);
  await page.evaluate(() => localStorage.removeItem('thermlog.series'));
  await page.close();
}

/* The window lives in the URL: a bookmark of a view opens it on the same window. */
async function bookmarkedWindow(ctx) {
  const page = await ctx.newPage();
  await page.goto(base + '#statistics');
  await waitReady(page, 'statistics');
  const before = await page.evaluate(() => document.body.dataset.ready);
  await page.selectOption('#window-select', '7d');
  await waitReady(page, 'statistics', before);
  const url = page.url();
  ok(/[?&]window=7d/.test(url) && /#statistics$/.test(url), 'choosing 7 days puts the window in the URL', url);
  const again = await ctx.newPage();
  await again.goto(url);
  await waitReady(again, 'statistics');
  const sel = await again.$eval('#window-select', (s) => s.value);
  const win = await again.$eval('#stats-table', (t) => Number(t.dataset.to) - Number(t.dataset.from));
  ok(sel === '7d' && win === 7 * 86400, 'the bookmarked URL opens on the 7-day window', { sel, win });
  // A custom range too, to the minute.
  const end = Math.floor(Date.now() / 3600000) * 3600 - 3600;
  const iso = (s) => new Date(s * 1000).toISOString().slice(0, 16);
  await again.selectOption('#window-select', 'custom');
  await again.fill('#window-from', iso(end - 3 * 3600));
  await again.fill('#window-to', iso(end));
  const r0 = await again.evaluate(() => document.body.dataset.ready);
  await again.click('#window-apply');
  await waitReady(again, 'statistics', r0);
  const curl = again.url();
  const third = await ctx.newPage();
  await third.goto(curl.replace('#statistics', '#history'));
  await waitReady(third, 'history');
  const w3 = await third.evaluate(() => document.querySelector('#window-text').textContent);
  const sel3 = await third.$eval('#window-select', (s) => s.value);
  await gotoView(third, 'statistics');
  const t3 = await third.$eval('#stats-table', (t) => ({ from: Number(t.dataset.from), to: Number(t.dataset.to) }));
  ok(sel3 === 'custom' && t3.from === end - 3 * 3600 && t3.to === end, 'a bookmarked custom range reopens on the same range, in another view', { curl, sel3, t3, w3 });
  await page.close();
  await again.close();
  await third.close();
}

/* A custom range longer than the server allows: a human message, no stale numbers. */
async function overLimit(ctx) {
  const page = await ctx.newPage();
  await page.goto(base + '#statistics');
  await waitReady(page, 'statistics');
  const good = await page.textContent('#stats-summary');
  await page.selectOption('#window-select', 'custom');
  await page.fill('#window-from', '2020-01-01T00:00');
  await page.fill('#window-to', new Date().toISOString().slice(0, 16));
  const r0 = await page.evaluate(() => document.body.dataset.ready);
  await page.click('#window-apply');
  await waitReady(page, 'statistics', r0);
  const summary = await page.textContent('#stats-summary');
  const table = await page.textContent('#stats-table tbody');
  const rows = await page.$$('#stats-table tbody tr[data-key]');
  ok(/cycles stored/.test(good) && !/cycles stored/.test(summary) && rows.length === 0, 'an over-limit range clears the previous statistics', { good, summary, rows: rows.length });
  const msg = summary + ' ' + table;
  ok(/400 days/.test(msg) && /years/.test(msg) && !/\d{5,} s\b/.test(msg) && !/HTTP 400/.test(msg),
    'an over-limit range says how long it is and the limit in days, not seconds', msg);
  await gotoView(page, 'overview');
  const ov = (await page.textContent('#groups')) + ' ' + (await page.textContent('#banner'));
  ok(/400 days/.test(ov) && !/\d{5,} s\b/.test(ov), 'the overview says the same', ov.slice(0, 300));
  await page.close();
}

/* Small wording: "just now" for a fresh cycle, cooling states out of their maximum. */
async function wording(ctx, channels) {
  const page = await ctx.newPage();
  await page.route('**/api/v1/status', async (route) => {
    const r = await route.fetch();
    const body = await r.json();
    body.last_cycle_age_s = 0;
    body.last_cycle_ts = Math.floor(Date.now() / 1000);
    await route.fulfill({ response: r, json: body });
  });
  await page.goto(base + '#overview');
  await waitReady(page, 'overview');
  const status = await page.textContent('#status-list');
  ok(/just now/.test(status) && !/0 ms/.test(status), 'a cycle of this second reads "just now"', status);
  ok(/Errors \(last hour\)0(?!\d)/.test(status) && !/swap_in|swap_out/.test(status), 'a fresh daemon has no errors', status);
  const cooling = channels.filter((c) => c.key.startsWith('cooling/'));
  const cells = await page.$$eval('#groups [data-source="cooling"] tr[data-key]', (trs) => trs.map((tr) => ({ key: tr.dataset.key, now: tr.querySelector('td.current').textContent })));
  const wrong = cooling.filter((c) => {
    const cell = cells.find((x) => x.key === c.key);
    return !cell || !new RegExp('^\\d+ of ' + c.meta.max_state + '$').test(cell.now);
  });
  ok(cooling.length > 0 && wrong.length === 0, 'cooling devices read "N of MAX"', cells);
  await page.close();
  // Errors name their channels, as /api/v1/status does.
  const errPage = await ctx.newPage();
  await errPage.route('**/api/v1/status', async (route) => {
    const r = await route.fetch();
    const body = await r.json();
    body.errors_last_hour = 2;
    body.error_channels = 'thermal/bigcore0-thermal, thermal/soc-thermal';
    await route.fulfill({ response: r, json: body });
  });
  await errPage.goto(base + '#overview');
  await waitReady(errPage, 'overview');
  const errDd = await errPage.$$eval('#status-list div', (ds) => ds.filter((d) => d.querySelector('dt').textContent === 'Errors (last hour)').map((d) => d.querySelector('dd').textContent));
  ok(errDd.length === 1 && errDd[0] === '2 (thermal/bigcore0-thermal, thermal/soc-thermal)', 'the errors card names the channels that failed', errDd);
  await errPage.close();
}

/*
 * A capacitor in service before the history (in_service): the consumed life is the total, the
 * history's share plus the extrapolated rest, marked as partly extrapolated, as the CLI's "~".
 * The demo configures no in_service date, so the API's answer is given one here.
 */
async function extrapolatedLife(ctx) {
  const page = await ctx.newPage();
  let sent = null;
  await page.route('**/api/v1/lifetime*', async (route) => {
    const r = await route.fetch();
    const body = await r.json();
    for (const cap of body.capacitors) {
      cap.in_service = new Date(Date.now() - 400 * 86400000).toISOString().slice(0, 19) + 'Z';
      cap.unobserved_service_h = 393 * 24;
      cap.consumed_fraction_extrapolated = 0.0025;
      cap.consumed_fraction_total = cap.consumed_fraction + 0.0025;
    }
    sent = body;
    await route.fulfill({ response: r, json: body });
  });
  await page.goto(base + '#lifetime');
  await waitReady(page, 'lifetime');
  for (const cap of sent ? sent.capacitors : []) {
    const dd = await page.$eval('#capacitors article[data-name="' + cap.name + '"] .facts', (dl) => {
      const d = [...dl.children].find((x) => x.querySelector('dt').textContent === 'Consumed life').querySelector('dd');
      return { text: d.textContent, marked: !!d.querySelector('[data-extrapolated]') };
    });
    const total = (cap.consumed_fraction_total * 100).toFixed(2) + ' %';
    ok(dd.text.startsWith(total + ' (partly extrapolated)') && dd.marked && dd.text.includes((cap.consumed_fraction * 100).toFixed(2) + ' % measured'),
      'in service before the history: the consumed life is the total ' + total + ', marked partly extrapolated', dd);
  }
  ok(sent && sent.capacitors.length > 0, 'the lifetime view read the capacitors');
  await page.close();
}

async function errorStates(ctx) {
  const json = (body, status) => (route) => route.fulfill({ status: status || 200, contentType: 'application/json', body: JSON.stringify(body) });
  const cases = [
    ['daemon away', async (page) => page.route('**/api/v1/**', (r) => r.abort('connectionrefused')), 'overview', '#banner', /not answering/],
    ['daemon starting', async (page) => page.route('**/api/v1/**', json({ error: 'the first cycle is not stored yet' }, 503)), 'overview', '#banner', /starting or busy/],
    ['empty database', async (page) => {
      await page.route('**/api/v1/channels*', json({ channels: [] }));
      await page.route('**/api/v1/stats*', json({ error: 'the database holds no samples' }, 404));
    }, 'overview', '#groups', /No channels are stored yet/],
    ['empty window', async (page) => page.route('**/api/v1/stats*', async (route) => {
      const r = await route.fetch();
      const body = await r.json();
      for (const c of body.channels) Object.assign(c, { count: 0, mean: null, p50: null, p95: null, max: null, max_time: null, time_in_state: [] });
      await route.fulfill({ response: r, json: body });
    }), 'statistics', '#stats-summary', /No samples in this window/],
    ['no capacitors', async (page) => page.route('**/api/v1/lifetime*', json({ capacitors: [] })), 'lifetime', '#capacitors', /No capacitors are configured/],
    ['bad request', async (page) => page.route('**/api/v1/lifetime*', json({ error: 'from: not a time' }, 400)), 'lifetime', '#capacitors', /from: not a time/],
  ];
  await Promise.all(cases.map(async ([name, setup, view, sel, want]) => {
    const page = await ctx.newPage();
    await setup(page);
    await page.goto(base + '#' + view);
    let text = '';
    try {
      await page.waitForFunction(([s, re]) => new RegExp(re).test(document.querySelector(s).textContent), [sel, want.source], { timeout: 15000 });
      text = await page.textContent(sel);
    } catch (e) {
      text = (await page.textContent(sel)) + ' / ' + (await page.textContent('#banner'));
    }
    ok(want.test(text), name + ': shows "' + want.source + '"', text);
    await page.screenshot({ path: path.join(shotDir, 'error-' + name.replace(/ /g, '-') + '.png') });
    await page.close();
  }));
}

/*
 * With a token the dashboard sends the browser to the sign-in form; the right token sets an
 * HttpOnly session cookie, returns to the view asked for, and the API then answers.
 */
async function signIn(ctx) {
  const page = await ctx.newPage();
  const failures = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failures.push(r.status() + ' ' + r.url());
  });
  await page.goto(tokenUrl + '#statistics');
  ok(/\/login#statistics$/.test(page.url()) && (await page.$('#token')), 'with a token, the dashboard opens on the sign-in form', page.url());
  await page.screenshot({ path: path.join(shotDir, 'login.png') });
  await page.setViewportSize({ width: 360, height: 700 });
  const bad = await overflows(page);
  ok(bad.length === 0, 'the sign-in form fits 360 px', bad.join('\n'));
  await page.setViewportSize({ width: 1280, height: 900 });

  await page.fill('#token', 'not-the-token-0123456789');
  await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  const failed = await page.isVisible('#failed');
  ok(/\/login\?failed#statistics$/.test(page.url()) && failed, 'a wrong token: the form again, saying so', { url: page.url(), failed });
  ok((await ctx.cookies(tokenUrl)).every((c) => c.name !== 'thermlog_session'), 'a wrong token sets no cookie');

  await page.fill('#token', token);
  await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  ok(page.url() === tokenUrl + '#statistics', 'the right token returns to the view asked for', page.url());
  const cookie = (await ctx.cookies(tokenUrl)).find((c) => c.name === 'thermlog_session');
  ok(cookie && cookie.httpOnly && cookie.sameSite === 'Strict' && cookie.path === '/' && !cookie.value.includes(token),
    'the session cookie is HttpOnly, SameSite=Strict, Path=/ and holds no token', cookie);
  await waitReady(page, 'statistics');
  const rows = await page.$$('#stats-table tbody tr[data-key]');
  ok(rows.length > 5, 'signed in, the API answers the dashboard (' + rows.length + ' channels)');
  ok(!(await page.evaluate(() => document.cookie.includes('thermlog_session'))), 'scripts cannot read the session cookie');
  await gotoView(page, 'overview');
  const status = await page.textContent('#status-list');
  ok(/Last cycle/.test(status), 'the overview loads too', status);
  ok(failures.length === 0, 'no request failed once signed in', failures.join('\n'));

  // A lost session (cleared cookies, a restarted daemon) sends API calls back to the form.
  await ctx.clearCookies();
  await page.click('#refresh');
  await page.waitForURL(/\/login#overview$/, { timeout: 15000 }).catch(() => {});
  ok(/\/login#overview$/.test(page.url()), 'a lost session goes back to the sign-in form', page.url());
  await page.close();
}

/*
 * The dashboard's fmtDuration as web/app.js defines it (its text taken out and evaluated), for
 * the one rule of a duration: every case of tests/fixtures/durations.txt, which the CLI's
 * unit_duration() is tested on too, reads the same.
 */
function appFmtDuration() {
  const src = fs.readFileSync(path.join(__dirname, '..', '..', 'web', 'app.js'), 'utf8');
  const at = src.indexOf('  function fmtDuration(s) {');
  let depth = 0;
  let i = src.indexOf('{', at);
  for (; i < src.length; i++) {
    if (src[i] === '{') depth++;
    else if (src[i] === '}' && --depth === 0) break;
  }
  return new Function(src.slice(at, i + 1) + '; return fmtDuration;')();
}

function testDurations(fmtDuration) {
  const file = path.join(__dirname, '..', 'fixtures', 'durations.txt');
  let n = 0;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line || line[0] === '#') continue;
    const [s, want] = line.split('\t');
    const got = fmtDuration(Number(s));
    ok(got === want, 'the dashboard reads ' + s + ' s as "' + want + '", as the CLI', got);
    n++;
  }
  ok(n >= 20, 'the durations fixture was read (' + n + ' cases)');
}

const fmtDuration = appFmtDuration();

async function main() {
  testDurations(fmtDuration);
  const consoleErrors = [];
  const badResponses = [];
  fs.rmSync(profileDir, { recursive: true, force: true });
  const ctx = await launch(profileDir, {
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
    colorScheme: 'light',
    timezoneId: 'UTC',
  });
  ctx.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(m.type() + ': ' + m.text());
  });
  ctx.on('weberror', (e) => consoleErrors.push('page error: ' + e.error().message));
  ctx.on('response', (r) => {
    if (r.status() >= 400) badResponses.push(r.status() + ' ' + r.url());
  });
  const page = ctx.pages()[0] || (await ctx.newPage());
  const pinned = await pinnedWindow();
  // The /api/v1/stats and /peak answers this page got, by window: a window ending now grows
  // while the test reads it, so the page is compared with the very answer it was drawn from.
  const statsSeen = new Map();
  const peakSeen = new Map();
  let lifetimeSeen = null; // over the whole history, which grows too
  page.on('response', (r) => {
    const u = new URL(r.url());
    const key = u.searchParams.get('from') + '-' + u.searchParams.get('to');
    if (r.status() !== 200) return;
    if (u.pathname.endsWith('/api/v1/stats')) statsSeen.set(key, r.json());
    if (u.pathname.endsWith('/api/v1/lifetime')) lifetimeSeen = r.json();
    if (u.pathname.endsWith('/api/v1/peak')) peakSeen.set(u.searchParams.get('channel') + ' ' + key, r.json());
  });

  try {
    // ---- assets as served: gzip variant equals the plain bytes, ETag revalidation ----
    for (const asset of ['/', '/app.js', '/style.css', '/vendor/dygraph.min.js']) {
      const plain = await get(asset);
      const gz = await get(asset, { 'Accept-Encoding': 'gzip' });
      ok(plain.status === 200 && gz.status === 200, asset + ' is served');
      const same = gz.headers['content-encoding'] === 'gzip' && zlib.gunzipSync(gz.body).equals(plain.body);
      ok(same, asset + ' gzip variant inflates to the plain bytes', { encoding: gz.headers['content-encoding'] });
      const etag = plain.headers.etag;
      const again = await get(asset, { 'If-None-Match': etag || '"none"' });
      ok(etag && again.status === 304, asset + ' revalidates with its ETag (304)', { etag, status: again.status });
    }

    // ---- overview: every channel the API knows ----
    const channels = (await getJson('/api/v1/channels')).channels;
    ok(channels.length >= 10, 'the demo has channels (' + channels.length + ')');
    await page.goto(base);
    await waitReady(page, 'overview');
    await page.waitForFunction(() => document.querySelectorAll('#groups svg.spark').length > 0 &&
      document.querySelectorAll('#groups td.spark-cell').length === document.querySelectorAll('#groups svg.spark').length, null, { timeout: 30000 });
    const rows = await page.$$eval('#groups tr[data-key]', (trs) => trs.map((tr) => ({
      key: tr.dataset.key,
      now: tr.querySelector('td.current').textContent,
      line: !!tr.querySelector('svg.spark polyline'),
    })));
    const shown = new Set(rows.map((r) => r.key));
    const missing = channels.filter((c) => !shown.has(c.key)).map((c) => c.key);
    ok(missing.length === 0 && rows.length === channels.length, 'overview shows every channel of /api/v1/channels', { missing, shown: rows.length });
    for (const src of ['thermal', 'cpufreq', 'devfreq', 'iio']) {
      ok(await page.$('#groups [data-source="' + src + '"]'), 'overview has the ' + src + ' group');
    }
    // Governors come from each channel's meta in /api/v1/channels.
    const npu = channels.find((c) => /^devfreq\/.*npu/.test(c.key));
    ok(npu && npu.meta && npu.meta.governor === 'rknpu_ondemand', '/api/v1/channels carries the NPU devfreq meta', npu && npu.meta);
    const govText = async (src) => page.$$eval('#groups [data-source="' + src + '"] tr[data-key] .gov', (g) => g.map((x) => x.textContent));
    const devfreqGov = await govText('devfreq');
    ok(devfreqGov.includes('governor rknpu_ondemand'), 'the NPU row shows its governor rknpu_ondemand', devfreqGov);
    const cpuGov = (await govText('cpufreq')).filter((t) => t !== '(absent)');
    ok(cpuGov.length > 0 && cpuGov.every((t) => t === 'governor schedutil'), 'every CPU cluster row shows its governor schedutil', cpuGov);
    const present = new Set(channels.filter((c) => c.present !== false).map((c) => c.key));
    const noValue = rows.filter((r) => present.has(r.key) && !/\d/.test(r.now)).map((r) => r.key);
    ok(noValue.length === 0, 'every present channel shows a current value', noValue);
    ok(rows.every((r) => r.line), 'every channel has a sparkline', rows.filter((r) => !r.line).map((r) => r.key));
    const temps = rows.filter((r) => /°C$/.test(r.now));
    ok(temps.length >= 7, 'temperatures carry their unit (' + temps.length + ')');
    const statusText = await page.textContent('#status-list');
    ok(/Last cycle/.test(statusText) && /Interval/.test(statusText) && /Clock/.test(statusText), 'daemon status is shown', statusText);

    // First view transfer (the chart library is loaded only by the history view).
    const transfer = await page.evaluate(() => {
      const entries = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
      return entries.map((e) => ({ name: e.name, size: e.transferSize, body: e.encodedBodySize }));
    });
    const total = transfer.reduce((s, e) => s + e.size, 0);
    const dygraphs = transfer.filter((e) => /dygraph/.test(e.name)).reduce((s, e) => s + e.size, 0);
    for (const e of transfer) diag('  ' + String(e.size).padStart(7) + ' B  ' + e.name.replace(base, '/'));
    diag('first view: ' + transfer.length + ' requests, ' + total + ' bytes transferred (headers included), ' + dygraphs + ' of them dygraphs');
    // The assets and a share per channel (its listing, statistics, latest value, sparkline):
    // the demo's 35 channels, load included, come to about 118 KB (the assets about 33 KB of it,
    // the Runs view's campaign list 0.8 KB; the rest varies by a few hundred bytes with the
    // simulated values' digits, so the budget keeps 3 KB above it).
    const budget = 66 * 1024 + 1536 * channels.length;
    ok(total - dygraphs < budget, 'first view transfers under ' + (budget / 1024).toFixed(0) + ' KB without dygraphs (' + (total - dygraphs) + ' B, ' + channels.length + ' channels)');

    // ---- statistics: same numbers as /api/v1/stats for the same window ----
    async function checkStats(label) {
      const win = await page.$eval('#stats-table', (t) => ({ from: t.dataset.from, to: t.dataset.to }));
      const seen = statsSeen.get(win.from + '-' + win.to);
      ok(seen, label + ': the page asked /api/v1/stats for the window it shows', { win, seen: [...statsSeen.keys()] });
      const api = seen ? await seen : await getJson('/api/v1/stats?from=' + win.from + '&to=' + win.to);
      const table = await page.$$eval('#stats-table tbody tr[data-key]', (trs) => trs.map((tr) => {
        const v = {};
        for (const td of tr.querySelectorAll('td[data-label]')) v[td.dataset.label] = { value: td.dataset.value, text: td.textContent };
        return { key: tr.dataset.key, v };
      }));
      ok(table.length === api.channels.length, label + ': one row per channel (' + table.length + ')', { api: api.channels.length });
      const diffs = [];
      for (const c of api.channels) {
        const row = table.find((r) => r.key === c.key);
        if (!row) {
          diffs.push(c.key + ': no row');
          continue;
        }
        const cov = c.coverage && typeof c.coverage === 'object' ? c.coverage.ratio : c.coverage;
        const want = { Mean: c.mean, Median: c.p50, p95: c.p95, Max: c.max, 'Time of max': c.max_time, Samples: c.count, Coverage: cov };
        for (const [k, w] of Object.entries(want)) {
          const got = row.v[k] ? row.v[k].value : undefined;
          const wantStr = w === null || w === undefined ? undefined : String(w);
          if (got !== wantStr) diffs.push(`${c.key} ${k}: page ${got} api ${wantStr}`);
        }
        if (c.unit === 'celsius' && typeof c.max === 'number' && row.v.Max.text !== c.max.toFixed(3) + ' °C') {
          diffs.push(`${c.key} Max text "${row.v.Max.text}"`);
        }
      }
      ok(diffs.length === 0, label + ': statistics table equals /api/v1/stats', diffs.slice(0, 10).join('\n'));
      return { win, api };
    }
    await gotoView(page, 'statistics');
    const day = await checkStats('24 h');
    ok(Number(day.win.to) - Number(day.win.from) === 86400, 'default window is 24 hours');
    const tis = await page.$$eval('#time-in-state table[data-key]', (ts) => ts.map((t) => t.dataset.key));
    const clocks = day.api.channels.filter((c) => Array.isArray(c.time_in_state) && c.time_in_state.length).map((c) => c.key);
    ok(clocks.length > 0 && clocks.every((k) => tis.includes(k)), 'time in state shown for every clock', { tis, clocks });

    const readyBefore = await page.evaluate(() => document.body.dataset.ready);
    await page.selectOption('#window-select', '1h');
    await waitReady(page, 'statistics', readyBefore);
    const hour = await checkStats('1 h');
    ok(Number(hour.win.to) - Number(hour.win.from) === 3600, 'switching to 1 h changes the window');
    const samples = async () => page.$$eval('#stats-table td[data-label="Samples"]', (tds) => tds.map((td) => Number(td.dataset.value)));
    const hourCounts = await samples();
    const dayCounts = day.api.channels.map((c) => c.count);
    ok(Math.max(...hourCounts) > 0 && Math.max(...hourCounts) < Math.max(...dayCounts), 'the table updates to fewer samples', { hour: Math.max(...hourCounts), day: Math.max(...dayCounts) });

    // ---- the table as Markdown, one line per channel ----
    await page.click('#copy-md');
    const md = (await page.inputValue('#md-text')).split('\n');
    const mdRows = md.filter((l) => /^\| .*`/.test(l));
    ok(md[0].startsWith('| Sensor | Mean |') && mdRows.length === hour.api.channels.length, 'Markdown copy has a header and a row per channel', md.slice(0, 3));

    // A custom range (the browser runs in UTC): two hours ending at the last full hour at least
    // 10 minutes ago, so every cycle of it is stored before the page and the API read it.
    const end = Math.floor((Date.now() / 1000 - 600) / 3600) * 3600;
    const iso = (s) => new Date(s * 1000).toISOString().slice(0, 16);
    await page.selectOption('#window-select', 'custom');
    await page.fill('#window-from', iso(end - 7200));
    await page.fill('#window-to', iso(end));
    const readyCustom = await page.evaluate(() => document.body.dataset.ready);
    await page.click('#window-apply');
    await waitReady(page, 'statistics', readyCustom);
    const custom = await checkStats('custom range');
    ok(Number(custom.win.from) === end - 7200 && Number(custom.win.to) === end, 'custom range is applied to the minute', custom.win);
    // ---- CSV downloads equal the export for the same (past, so fixed) window ----
    for (const fmt of ['long', 'wide']) {
      const href = await page.getAttribute('#csv-' + fmt, 'href');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv-' + fmt)]);
      const file = await download.path();
      const got = fs.readFileSync(file, 'utf8');
      const want = (await get('/' + href)).body.toString('utf8');
      const lines = got.split(/\r?\n/).filter(Boolean);
      ok(lines.length > 10 && got === want, 'CSV (' + fmt + ') download equals /' + href + ' (' + lines.length + ' lines)', { got: got.slice(0, 120), want: want.slice(0, 120) });
      if (fmt === 'long') {
        ok(lines[0] === 'time,unix,channel,value,unit,label', 'long CSV header', lines[0]);
        const rowsLong = lines.length - 1;
        const expected = custom.api.channels.reduce((s, c) => s + c.count, 0);
        ok(rowsLong === expected, 'long CSV rows = sum of window sample counts', { rows: rowsLong, expected });
      }
    }

    // ---- the Report buttons download thermlog report of the window shown ----
    const compact = (t) => new Date(t * 1000).toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
    for (const view of ['overview', 'runs']) {
      await gotoView(page, view);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#report-' + view)]);
      const u = new URL(download.url());
      const got = fs.readFileSync(await download.path(), 'utf8');
      ok(u.pathname === '/api/v1/report' && u.searchParams.get('from') === String(end - 7200) &&
        u.searchParams.get('to') === String(end) && [...u.searchParams.keys()].length === 2,
      view + ': the Report button asks /api/v1/report for the window shown', download.url());
      ok(download.suggestedFilename() === 'thermlog-report-' + compact(end - 7200) + '-' + compact(end) + '.html' &&
        got.startsWith('<!DOCTYPE html>') && got.includes('<h2>Runs</h2>') && got.includes('<h2>Zones</h2>'),
      view + ': it downloads the HTML report named for the window', { name: download.suggestedFilename(), head: got.slice(0, 200) });
      // The daemon's document for that request, fetched again: the same bytes (a past window;
      // the demo capacitor's age in hours may turn between the two, so once more if it did).
      let want = (await get(u.pathname + u.search)).body.toString('utf8');
      if (want !== got) want = (await get(u.pathname + u.search)).body.toString('utf8');
      ok(want === got && got.length > 5000, view + ': the download is GET ' + u.pathname + u.search + ' byte for byte (' + got.length + ' bytes)');
    }
    // Back to Statistics, loaded for this window already (so no new ready mark).
    await page.click('nav a[data-view="statistics"]');
    await page.waitForSelector('#view-statistics:not([hidden])');

    const readyHour = await page.evaluate(() => document.body.dataset.ready);
    await page.selectOption('#window-select', '24h');
    await waitReady(page, 'statistics', readyHour);

    // ---- history chart draws ----
    await gotoView(page, 'history');
    await page.waitForSelector('#history-chart canvas');
    await page.waitForSelector('#peak-chart canvas', { timeout: 30000 });
    const ink = await inkedPixels(page, '#history-chart');
    ok(ink.inked > 2000 && ink.colors > 4, 'history chart canvas is not blank', ink);
    const peakInk = await inkedPixels(page, '#peak-chart');
    ok(peakInk.inked > 500 && peakInk.colors > 4, 'peak chart canvas is not blank', peakInk);
    const labels = await page.evaluate(() => document.querySelector('#history-legend').textContent);
    ok(/GHz|cpu|npu/i.test(labels) || (await page.$$eval('#history-chart canvas', (c) => c.length)) > 0, 'history legend lists the series', labels);
    const peakKey = await page.$eval('#peak-channel', (s) => s.value);
    const win = await page.$eval('#stats-table', (t) => ({ from: t.dataset.from, to: t.dataset.to }));
    const peakAnswer = peakSeen.get(peakKey + ' ' + win.from + '-' + win.to);
    ok(peakAnswer, 'the page asked /api/v1/peak for ' + peakKey + ' over its window', [...peakSeen.keys()]);
    const peak = peakAnswer ? await peakAnswer : await getJson('/api/v1/peak?channel=' + encodeURIComponent(peakKey) + '&samples=30&from=' + win.from + '&to=' + win.to);
    const summary = await page.textContent('#peak-summary');
    ok(summary.includes(peak.max.toFixed(3)), 'peak summary shows the maximum of /api/v1/peak', { summary, max: peak.max });

    // ---- runs: per label what /api/v1/runs/stats says, the list, a run's page, History shaded ----
    await runsViews(ctx, pinned);
    await throttleViews(ctx, pinned);

    // ---- lifetime shows the demo capacitor ----
    await gotoView(page, 'lifetime');
    ok(lifetimeSeen, 'the page asked /api/v1/lifetime');
    const life = lifetimeSeen ? await lifetimeSeen : await getJson('/api/v1/lifetime');
    ok(life.capacitors.length >= 1, 'the demo configures a capacitor');
    {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#report-lifetime')]);
      const u = new URL(download.url());
      const got = fs.readFileSync(await download.path(), 'utf8');
      ok(u.pathname === '/api/v1/report' && u.search === '?lifetime=only' && /^thermlog-capacitors-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.html$/.test(download.suggestedFilename()) &&
        life.capacitors.every((c) => got.includes('Capacitor design review: ' + c.name)) && got.includes('Review checklist'),
      'lifetime: the Report button downloads the design review of the whole history', { url: download.url(), name: download.suggestedFilename() });
    }
    const cards = await page.$$eval('#capacitors article[data-name]', (as) => as.map((a) => ({ name: a.dataset.name, text: a.textContent })));
    for (const cap of life.capacitors) {
      const card = cards.find((c) => c.name === cap.name);
      ok(card, 'lifetime card for ' + cap.name);
      if (!card) continue;
      ok(card.text.includes(cap.sensor), 'card names the sensor ' + cap.sensor);
      const consumed = await page.$eval('#capacitors article[data-name="' + cap.name + '"] .facts', (dl) =>
        [...dl.children].find((d) => d.querySelector('dt').textContent === 'Consumed life').querySelector('dd').textContent);
      ok(consumed.startsWith((cap.consumed_fraction_total * 100).toFixed(2) + ' %'), 'card shows the consumed life over the service, consumed_fraction_total', { consumed, total: cap.consumed_fraction_total });
      ok(/Equivalent temperature/.test(card.text) && /Life at the mean temperature/.test(card.text), 'card shows equivalent temperature and life at the mean');
      ok(typeof cap.mean_temp_c === 'number' && card.text.includes('at ' + cap.mean_temp_c.toFixed(1) + ' °C'), 'card shows the mean temperature ' + cap.mean_temp_c);
      ok(typeof cap.p95_temp_c === 'number' && card.text.includes('at ' + cap.p95_temp_c.toFixed(1) + ' °C'), 'card shows the p95 temperature ' + cap.p95_temp_c);
      // With self-heating the model ages the part hotter than the sensor reads: both are shown,
      // as `thermlog lifetime` prints them, so a life can be checked against its temperature.
      const c1 = (t) => t.toFixed(1) + ' °C';
      const pair = (m, e) => c1(m) + ' measured, ' + c1(e) + ' effective';
      ok(cap.self_heating_k === 3 && Math.abs(cap.mean_effective_temp_c - cap.mean_temp_c - 3) < 1e-9, 'the demo capacitor has 3 K of self-heating', cap.self_heating_k);
      ok(card.text.includes(Math.round(cap.life_at_mean_temp_h).toLocaleString('en-US') + ' h at ' + pair(cap.mean_temp_c, cap.mean_effective_temp_c)),
        'the life at the mean temperature names its measured and effective temperatures (' + pair(cap.mean_temp_c, cap.mean_effective_temp_c) + ')', card.text.slice(0, 600));
      ok(card.text.includes(Math.round(cap.life_at_p95_temp_h).toLocaleString('en-US') + ' h at ' + pair(cap.p95_temp_c, cap.p95_effective_temp_c)),
        'the life at the p95 temperature names both too (' + pair(cap.p95_temp_c, cap.p95_effective_temp_c) + ')');
      ok(card.text.includes('Equivalent temperature' + pair(cap.equivalent_temp_c, cap.equivalent_effective_temp_c)),
        'the equivalent temperature: measured and effective (' + pair(cap.equivalent_temp_c, cap.equivalent_effective_temp_c) + ')');
      ok(card.text.includes('+3 K'), 'the card names the self-heating rise');
      // The explanation compares the life at the mean temperature with the life before the cap.
      const ratio = cap.life_at_mean_temp_h / cap.life_uncapped_h;
      ok(ratio <= 1.005 || card.text.includes(ratio.toFixed(2) + '× the effective life'), 'card explains the mean-temperature life (' + ratio.toFixed(2) + '×)');
      ok(!cap.capped || card.text.includes(Math.round(cap.life_uncapped_h).toLocaleString('en-US') + ' h (capped'), 'a capped card shows the life before the cap');
      ok(cap.relative_lifetime === undefined || (await page.$$('#capacitors table.relative tbody tr')).length >= cap.relative_lifetime.length, 'relative-lifetime table');
      // "If it ran cooler" never promises more than the seal-ageing cap.
      const rel = await page.$$eval('#capacitors article[data-name="' + cap.name + '"] table.relative tbody tr', (trs) => trs.map((tr) => tr.lastElementChild.textContent));
      const capY = cap.life_cap_h / 8760;
      const years = rel.map((t) => parseFloat(t.replace(/[^\d.].*$/, '').replace(/^[^\d]*/, '')));
      const over = cap.relative_lifetime.map((r, i) => [r, rel[i]]).filter(([r]) => r.life_h > cap.life_cap_h);
      ok(typeof cap.life_cap_h === 'number' && over.length > 0 && over.every(([, t]) => t.includes('≥ ' + capY.toFixed(0) + ' years (cap)')) &&
        rel.every((t, i) => !(years[i] > capY)), 'if it ran cooler: lives beyond the ' + capY + '-year cap read "≥ ' + capY.toFixed(0) + ' years (cap)"', rel);
      // The design review's two charts and the band of the sensor's uncertainty.
      const profile = (await getJson('/api/v1/lifetime/profile')).capacitors.find((c) => c.name === cap.name);
      const series = (await getJson('/api/v1/lifetime/series')).capacitors.find((c) => c.name === cap.name);
      const sel = '#capacitors article[data-name="' + cap.name + '"] ';
      const bins = await page.$eval(sel + 'svg.cap-profile', (g) => [Number(g.dataset.bins), g.querySelectorAll('rect').length,
        g.parentNode.querySelector('figcaption').textContent]);
      ok(profile && bins[0] === profile.bins.length && bins[1] === profile.bins.length && bins[1] > 0 && bins[2].includes('hours per 5 K bin'),
        'lifetime: the mission-profile histogram, a bar a bin of /api/v1/lifetime/profile', { bins, want: profile && profile.bins.length });
      const line = await page.$eval(sel + 'svg.cap-consumed', (g) => [Number(g.dataset.points), g.querySelector('polyline.line').getAttribute('points').split(' ').length,
        g.querySelectorAll('polyline.band').length]);
      ok(series && line[0] === series.points.length && line[1] === series.points.length && line[2] === 2 && line[0] > 1,
        'lifetime: the consumed-life chart, a point a point of /api/v1/lifetime/series, the band dashed', { line, want: series && series.points.length });
      const band = await page.$eval(sel + '.facts', (dl) => [...dl.children].map((d) => d.textContent).find((t) => t.startsWith('Life with ±')));
      ok(cap.band && band && band.includes('±' + cap.band.uncertainty_k + ' K') && band.includes(' – '),
        'lifetime: the life with the band of the sensor uncertainty', band);
      ok(card.text.includes('Ages at') && card.text.includes(cap.basis_reason), 'lifetime: the temperature the part ages at and why', cap.basis_reason);
    }

    // ---- phone widths, the series choice, bookmarks, limits and wording ----
    await phoneViews(ctx);
    await seriesChoice(ctx, channels);
    await bookmarkedWindow(ctx);
    await wording(ctx, channels);
    await extrapolatedLife(ctx);

    // ---- desktop screenshots of each view, plus a dark desktop overview ----
    await screenshots(ctx, 'light');
    const dark = await ctx.newPage();
    await dark.emulateMedia({ colorScheme: 'dark' });
    await dark.goto(base + '#overview');
    await waitReady(dark, 'overview');
    await dark.waitForSelector('#groups svg.spark');
    await dark.screenshot({ path: path.join(shotDir, 'dark-overview-desktop.png'), fullPage: true });
    const darkBg = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
    ok(darkBg !== 'rgb(246, 247, 249)' && darkBg !== 'rgb(255, 255, 255)', 'dark scheme applies', darkBg);
    await dark.close();
    diag('screenshots in ' + shotDir);
  } catch (e) {
    ok(false, 'test ran to the end', e.stack || String(e));
  }

  ok(consoleErrors.length === 0, 'no console errors or warnings', consoleErrors.join('\n'));
  ok(badResponses.length === 0, 'no failed requests', badResponses.join('\n'));

  // ---- API trouble shows a message, never a blank page (after the clean-console check) ----
  try {
    await overLimit(ctx);
    await errorStates(ctx);
    if (tokenUrl) await signIn(ctx);
  } catch (e) {
    ok(false, 'error states ran to the end', e.stack || String(e));
  }
  await ctx.close();
  fs.rmSync(profileDir, { recursive: true, force: true });
  done();
}

main().catch((e) => bailOut('the dashboard test ran to its end', e));
