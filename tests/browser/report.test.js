'use strict';
/*
 * thermlog report's HTML in Debian's chromium, opened as a file at a phone's width and at a
 * desktop's: no console error, no request beyond the file itself, not blank (sections, tables,
 * the chart drawn); at 390 px the page no wider than the phone, each table's rows stacked (a
 * cell a line beside its column's name) and no inner scrollbar; at 1280 px every column of every
 * table visible without an inner scrollbar; in print every section after the first starts a
 * page. Prints TAP; saves a screenshot of each at both widths.
 * usage: node report.test.js SCREENSHOT_DIR PROFILE_DIR FILE.html...
 */
const fs = require('fs');
const path = require('path');
const { pathToFileURL } = require('url');
const { ok, done, bailOut, launch } = require('./tap');

const [shotDir, profileDir, ...files] = process.argv.slice(2);
if (!shotDir || !profileDir || files.length === 0) {
  console.error('usage: node report.test.js SCREENSHOT_DIR PROFILE_DIR FILE.html...');
  process.exit(2);
}


/* Elements beyond the viewport that are not inside a scrolling box of their own. */
function overflows(page) {
  return page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    const bad = [];
    if (document.documentElement.scrollWidth > vw) bad.push('the page is ' + document.documentElement.scrollWidth + ' px wide in ' + vw);
    for (const e of document.querySelectorAll('body *')) {
      if (e.parentElement && e.parentElement.closest('.scroll')) continue; // scrolls in its box
      if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;
      const r = e.getBoundingClientRect();
      if (!r.width || !r.height) continue;
      if (r.right > vw + 0.5 || r.left < -0.5) bad.push(e.tagName.toLowerCase() + ' "' + (e.textContent || '').trim().slice(0, 30) + '" spans ' + r.left.toFixed(0) + '..' + r.right.toFixed(0));
    }
    return bad;
  });
}

async function main() {
  fs.rmSync(profileDir, { recursive: true, force: true });
  fs.mkdirSync(shotDir, { recursive: true });
  const ctx = await launch(profileDir, {
    viewport: { width: 390, height: 844 },
    colorScheme: 'light',
    timezoneId: 'UTC',
  });
  try {
    for (const file of files) {
      const name = path.basename(file);
      const url = pathToFileURL(path.resolve(file)).href;
      const page = await ctx.newPage();
      const messages = [];
      const requests = [];
      page.on('console', (m) => messages.push(m.type() + ': ' + m.text()));
      page.on('pageerror', (e) => messages.push('page error: ' + e.message));
      page.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
      await page.goto(url, { waitUntil: 'load' });
      await page.waitForTimeout(200);
      const empty = /No samples in this window/.test(await page.textContent('body'));
      const facts = await page.evaluate(() => ({
        text: document.body.innerText.length,
        sections: document.querySelectorAll('section > h2').length,
        tables: document.querySelectorAll('.scroll > table').length,
        charts: [...document.querySelectorAll('figure svg')].map((s) => {
          const r = s.getBoundingClientRect();
          return { w: r.width, h: r.height, lines: s.querySelectorAll('polyline, rect[fill-opacity]').length };
        }),
        scrollers: [...document.querySelectorAll('.scroll')].filter((e) => e.scrollWidth > e.clientWidth)
          .map((e) => getComputedStyle(e).overflowX),
      }));
      ok(messages.length === 0, name + ': no console message or page error', messages.join('\n'));
      ok(requests.length === 0, name + ': no request leaves the file', requests.join('\n'));
      ok(facts.text > 400 && facts.sections >= 4 && facts.tables >= 1, name + ': not blank (' +
        facts.sections + ' sections, ' + facts.tables + ' tables)', facts);
      if (!empty) {
        ok(facts.charts.length >= 1 && facts.charts.every((c) => c.lines >= 1 && c.w > 300 && c.w <= 390 && c.h > 100),
          name + ': the chart draws, scaled to the phone\'s width', facts.charts);
      }
      const bad = await overflows(page);
      ok(bad.length === 0, name + ': fits 390 px', bad.slice(0, 10).join('\n'));
      ok(facts.scrollers.length === 0, name + ': at 390 px no table scrolls in a box of its own (' + facts.scrollers.length + ')', facts.scrollers);
      const stacked = await page.evaluate(() => [...document.querySelectorAll('tbody tr')]
        .filter((tr) => getComputedStyle(tr).display !== 'block').length);
      ok(stacked === 0, name + ': at 390 px every table row is stacked', stacked);
      const named = await page.evaluate(() => [...document.querySelectorAll('tbody td')]
        .filter((td) => td.dataset.label === undefined).length);
      ok(named === 0, name + ': each cell carries its column\'s name', named);
      await page.screenshot({ path: path.join(shotDir, name + '-390.png'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
      const wide = await page.evaluate(() => {
        const vw = document.documentElement.clientWidth;
        const hidden = [];
        for (const box of document.querySelectorAll('.scroll')) {
          if (box.scrollWidth > box.clientWidth + 1) hidden.push('a table scrolls: ' + box.scrollWidth + ' px in ' + box.clientWidth + ' (' + box.querySelector('th').textContent + ')');
        }
        for (const td of document.querySelectorAll('td.n, th')) {
          const r = td.getBoundingClientRect();
          if (r.right > vw + 0.5) hidden.push(td.tagName + ' "' + td.textContent.slice(0, 30) + '" ends at ' + r.right.toFixed(0));
        }
        const rows = [...document.querySelectorAll('tbody tr')].filter((tr) => getComputedStyle(tr).display !== 'table-row').length;
        return { hidden, rows, page: document.documentElement.scrollWidth, vw };
      });
      ok(wide.hidden.length === 0 && wide.page <= wide.vw, name + ': at 1280 px every numeric column is visible without an inner scrollbar',
        wide.hidden.slice(0, 10).join('\n'));
      ok(wide.rows === 0, name + ': at 1280 px the tables are tables', wide.rows);
      await page.screenshot({ path: path.join(shotDir, name + '-1280.png'), fullPage: true });
      await page.emulateMedia({ media: 'print' });
      const breaks = await page.evaluate(() => [...document.querySelectorAll('section')].map((s) => getComputedStyle(s).breakBefore));
      ok(breaks.length >= 2 && breaks[0] !== 'page' && breaks.slice(1).every((b) => b === 'page'),
        name + ': in print each section after the first starts a page', breaks);
      const pdf = await page.pdf({ format: 'A4' });
      const pages = (pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) || []).length;
      ok(pages >= breaks.length, name + ': it prints (' + pages + ' pages for ' + breaks.length + ' sections)', pages);
      await page.close();
    }
  } finally {
    await ctx.close();
  }
  done();
}

main().catch((e) => bailOut('the report test ran to its end', e));
