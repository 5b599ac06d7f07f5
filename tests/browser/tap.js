'use strict';
/*
 * What the browser tests share: their TAP lines (ok(), then done() with the plan) and Debian's
 * chromium, headless, on a profile of the test's own (launch()).
 */
const { chromium } = require('playwright-core');

let count = 0;
let failed = 0;

/* One TAP line: "ok N - what", or "not ok N - what" with @detail as comment lines; @cond back. */
function ok(cond, what, detail) {
  count++;
  console.log((cond ? 'ok ' : 'not ok ') + count + ' - ' + what);
  if (!cond) {
    failed++;
    if (detail !== undefined) console.log('#   ' + String(typeof detail === 'string' ? detail : JSON.stringify(detail)).split('\n').join('\n#   '));
  }
  return cond;
}

/* The plan, then the exit: 1 when a check failed. */
function done() {
  console.log('1..' + count);
  process.exit(failed ? 1 : 0);
}

/* A test that could not go on: a failing line with its reason, the plan, exit 1. */
function bailOut(what, e) {
  ok(false, what, String((e && e.stack) || e));
  done();
}

/* Debian's chromium on the profile in @profileDir, with @options (viewport, colorScheme, ...). */
function launch(profileDir, options) {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ...options,
  });
}

module.exports = { ok, done, bailOut, launch };
