'use strict';
/*
 * The dashboard's Runs view filtered by a campaign, in Debian's chromium against a simulated
 * board that ran one (tests/campaign/test_campaign.py's interleaved part starts it): the
 * Campaign list names what GET /api/v1/campaigns lists; choosing one shows its runs and its
 * per-label figures as GET /api/v1/runs and /api/v1/runs/stats with tag=campaign=ID give them,
 * whatever the window; the choice is kept in the URL (?campaign=ID) and a reload keeps it;
 * "every run in the window" shows the window's runs again; the console stays clean.
 * Prints TAP. usage: node campaign.test.js URL PROFILE_DIR
 */
const http = require('http');
const { ok, done, bailOut, launch } = require('./tap');

const [base, profileDir] = process.argv.slice(2);
if (!base || !profileDir) {
  console.error('usage: node campaign.test.js URL PROFILE_DIR');
  process.exit(2);
}

function getJson(urlPath) {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(urlPath, base), { headers: { Accept: 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(Buffer.concat(chunks).toString())) :
        reject(new Error(urlPath + ': HTTP ' + res.statusCode))));
    });
    req.on('error', reject);
    req.setTimeout(20000, () => req.destroy(new Error('timeout: ' + urlPath)));
  });
}

/* The Runs view ready for @key (its data-ready mark), the table's run ids and the cards' labels. */
async function runsShown(page, key) {
  await page.waitForFunction((k) => document.body.dataset.ready === 'runs:' + k && !document.body.dataset.loading,
    key, { timeout: 30000 });
  return page.evaluate(() => ({
    ids: [...document.querySelectorAll('#runs-table tbody tr')].map((tr) => Number(tr.dataset.id)),
    labels: [...document.querySelectorAll('#runs-labels [data-label]')].map((c) => c.dataset.label),
    title: document.querySelector('#runs-list-title').textContent,
  }));
}

const WINDOW = '1577836800-1577923200'; // the window of the URL below, as the view's ready mark says it

async function main() {
  const campaigns = (await getJson('/api/v1/campaigns')).campaigns;
  const c = campaigns[campaigns.length - 1];
  const tag = '?tag=' + encodeURIComponent('campaign=' + c.id);
  const want = (await getJson('/api/v1/runs' + tag)).runs.map((r) => r.id).reverse();
  const wantLabels = (await getJson('/api/v1/runs/stats' + tag)).labels.map((l) => l.label);
  const consoleErrors = [];
  const ctx = await launch(profileDir, {
    viewport: { width: 1280, height: 900 },
    timezoneId: 'UTC',
  });
  try {
    const page = await ctx.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(m.type() + ': ' + m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push('pageerror: ' + e.message));
    // A window that holds none of the campaign's runs: the campaign's are shown all the same.
    await page.goto(new URL('?from=2020-01-01T00:00Z&to=2020-01-02T00:00Z#runs', base).href);
    const empty = await runsShown(page, WINDOW);
    ok(empty.ids.length === 0, 'the Runs view of a window before the campaign lists no run', empty);
    const options = await page.$$eval('#runs-campaign option', (os) => os.map((o) => ({ value: o.value, text: o.textContent })));
    ok(!(await page.isHidden('#runs-campaign-form')) && options.length === campaigns.length + 1 &&
      options.some((o) => o.value === String(c.id) && o.text.startsWith('#' + c.id + ' ' + c.name + ' on ' + c.board) &&
        o.text.includes(c.slots_ended + ' of ' + c.slots)),
    'the Campaign list names each campaign of GET /api/v1/campaigns (' + campaigns.length + ')', options);
    await page.selectOption('#runs-campaign', String(c.id));
    const got = await runsShown(page, 'campaign-' + c.id);
    ok(JSON.stringify(got.ids) === JSON.stringify(want) && want.length > 0,
      'choosing campaign ' + c.id + ' lists its runs as /api/v1/runs?tag=campaign=' + c.id + ' (' + want.length + ', newest first)',
      { got: got.ids, want });
    ok(JSON.stringify(got.labels) === JSON.stringify(wantLabels),
      'and its labels\' figures as /api/v1/runs/stats?tag=campaign=' + c.id, { got: got.labels, want: wantLabels });
    ok(got.title.includes('#' + c.id + ' ' + c.name), 'the list says whose runs they are', got.title);
    ok(new URL(page.url()).searchParams.get('campaign') === String(c.id), 'the URL keeps the choice', page.url());
    await page.reload();
    const again = await runsShown(page, 'campaign-' + c.id);
    ok(JSON.stringify(again.ids) === JSON.stringify(want) &&
      (await page.$eval('#runs-campaign', (s) => s.value)) === String(c.id), 'a reload shows the same campaign', again);
    await page.selectOption('#runs-campaign', '');
    const back = await runsShown(page, WINDOW);
    ok(back.ids.length === 0 && !new URL(page.url()).searchParams.has('campaign'),
      '"every run in the window" shows the window\'s runs again', { back, url: page.url() });
    ok(consoleErrors.length === 0, 'no console errors or warnings', consoleErrors);
  } finally {
    await ctx.close();
  }
}

main().then(done, (e) => bailOut('the campaign browser test ran to its end', e));
