// Browser tests of the diffgate web review app (make web → build/web):
// Debian's chromium, driven by playwright-core, loads the real wasm from a
// tiny local server and is operated like a reviewer would: clicks on the
// Fyne canvas at the controls' places (window.diffgateRect), the browser's
// file chooser, keyboard, drag and drop, downloads. window.diffgate tells
// what the app shows; screenshot pixels check the colors.
//
// Screenshots go to build/web-test/ (look at them after a UI change).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { serve } from './server.mjs';
import { decodePNG, hex, count, colors, reddish } from './png.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const webDir = path.join(root, 'build/web');
const fixtures = path.join(here, 'fixtures');
const shots = path.join(root, 'build/web-test');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const viewport = { width: 1400, height: 900 };

// The diffgate theme's colors (app/style/theme.go).
const light = { fail: hex('#cf222e'), pass: hex('#1a7f37'), warn: hex('#9a6700') };
const dark = { fail: hex('#f85149'), pass: hex('#3fb950') };

let server, browser;

before(async () => {
  assert.ok(fs.existsSync(path.join(webDir, 'diffgate.wasm')), 'build/web/diffgate.wasm is missing: run make web');
  fs.mkdirSync(shots, { recursive: true });
  server = await serve({ '/': webDir, '/fixtures/': fixtures });
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--use-angle=swiftshader', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
  });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// open loads the app (with an optional query) and waits until it is up.
async function open(t, query = '', colorScheme = 'light') {
  const context = await browser.newContext({ viewport, colorScheme, acceptDownloads: true });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (/panic|fatal error|Fyne call thread/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('crash', () => problems.push('the page crashed'));
  t.after(() => assert.deepEqual(problems, [], 'the page logged problems'));
  await page.goto(`${server.url}/${query}`);
  await page.waitForFunction(() => window.diffgateReady === true, null, { timeout: 90_000 });
  return page;
}

async function status(page) {
  return page.evaluate(() => window.diffgate);
}

// until waits for window.diffgate to satisfy pred (a function of the
// status, run in the page) and returns the status.
async function until(page, pred, what) {
  try {
    await page.waitForFunction(`(${pred})(window.diffgate || {})`, null, { timeout: 20_000 });
  } catch (e) {
    throw new Error(`waiting for ${what}: ${e.message.split('\n')[0]}; status ${JSON.stringify(await status(page))}`);
  }
  return status(page);
}

async function rect(page, name) {
  const r = await page.evaluate((n) => window.diffgateRect(n), name);
  assert.ok(r, `${name} is not on the page`);
  return r;
}

// focused waits until the focused widget satisfies pred and returns its rectangle.
async function focused(page, pred, what) {
  let f;
  for (let i = 0; i < 50; i++) {
    f = await page.evaluate(() => window.diffgateRect('focused'));
    if (f && pred(f)) return f;
    await page.waitForTimeout(100);
  }
  assert.fail(`waiting for ${what} to have the focus; focused: ${JSON.stringify(f)}`);
}

// click clicks the middle of a named control with the mouse.
async function click(page, name) {
  const r = await rect(page, name);
  await page.mouse.click(r.x + r.width / 2, r.y + r.height / 2);
  return r;
}

// pick clicks a control that opens the browser's file chooser and picks a fixture.
async function pick(page, name, fixture) {
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser', { timeout: 15_000 }),
    click(page, name),
  ]);
  await chooser.setFiles(path.join(fixtures, fixture));
}

// typeInto clicks a text field, types (at a person's pace: Fyne handles
// each key on a goroutine of its own) and waits until the field shows it.
async function typeInto(page, name, lines, { append = false } = {}) {
  await click(page, name);
  if (append) {
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
  }
  const before = (await rect(page, name)).text;
  for (const [i, line] of lines.entries()) {
    if (i > 0) await page.keyboard.press('Enter', { delay: 20 });
    await page.keyboard.type(line, { delay: 20 });
  }
  const want = (append ? before + '\n' : '') + lines.join('\n');
  await page.waitForFunction(async ([n, want]) => (await window.diffgateRect(n))?.text === want, [name, want], { timeout: 15_000 })
    .catch(async () => assert.fail(`${name} shows ${JSON.stringify((await rect(page, name)).text)}, want ${JSON.stringify(want)}`));
}

async function download(page, name) {
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 15_000 }), click(page, name)]);
  return { name: dl.suggestedFilename(), text: fs.readFileSync(await dl.path(), 'utf8') };
}

// look takes screenshots until check(img) passes (the canvas is redrawn on
// the next frame after a change), saving the last one as name.png.
async function look(page, name, check) {
  let last;
  for (let i = 0; i < 20; i++) {
    const img = decodePNG(await page.screenshot({ path: path.join(shots, `${name}.png`) }));
    try {
      check(img);
      return img;
    } catch (e) {
      last = e;
      await page.waitForTimeout(250);
    }
  }
  throw last;
}

function notBlank(img) {
  assert.ok(colors(img) > 40, `the page looks blank (${colors(img)} colors)`);
}

test('a failing report opened with the file picker, allowed, downloaded', async (t) => {
  const page = await open(t);
  let s = await status(page);
  assert.equal(s.verdict, '');
  await look(page, 'welcome', (img) => {
    notBlank(img);
  });

  await pick(page, 'open', 'fail.json');
  s = await until(page, (s) => s.source === 'fail.json', 'fail.json to open');
  assert.equal(s.error, '');
  assert.equal(s.verdict, 'fail');
  assert.deepEqual(
    { added: s.added, removed: s.removed, changed: s.changed, violations: s.violations, allowed: s.allowed, risky: s.risky },
    { added: 3, removed: 1, changed: 3, violations: 5, allowed: 2, risky: 1 });
  assert.deepEqual(s.reasons, ['5 unexpected changes', '1 risky change', '1 leftover process']);
  assert.equal(s.selected, 'cache/passwd', 'the first violation is selected');
  assert.equal(await page.title(), 'diffgate: FAIL fail.json');

  const banner = await rect(page, 'banner');
  await look(page, 'fail-report', (img) => {
    notBlank(img);
    const red = count(img, light.fail, 10, banner);
    assert.ok(red > 800, `FAIL banner: ${red} red pixels`);
    assert.ok(count(img, light.pass, 10, banner) < 50, 'green in the FAIL banner');
    // The change tree below is color-coded: red (removed, violations),
    // green (added) and amber (changed).
    const tree = { x: 0, y: banner.y + banner.height + 50, width: 440, height: 400 };
    assert.ok(count(img, light.pass, 16, tree) > 60, 'no green (added) in the tree');
    assert.ok(count(img, light.warn, 16, tree) > 60, 'no amber (changed) in the tree');
    assert.ok(count(img, light.fail, 16, tree) > 60, 'no red (removed/violation) in the tree');
  });

  // Allow the selected violation as a reviewer would: Enter moves to the
  // detail's Allow… button, a click opens the suggestions, the keyboard
  // picks the first (the risk-naming entry for this symlink).
  await page.keyboard.press('Enter');
  const allow = await focused(page, (f) => f.text === 'Allow…', 'the Allow… button');
  await page.mouse.click(allow.x + allow.width / 2, allow.y + allow.height / 2);
  await focused(page, (f) => f.kind === '*widget.PopUpMenu', 'the suggestions menu');
  await look(page, 'allow-menu', notBlank);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  s = await until(page, (s) => s.violations === 4, 'the verdict to be re-evaluated');
  assert.equal(s.allowed, 3);
  assert.equal(s.verdict, 'fail');
  assert.deepEqual(s.reasons, ['4 unexpected changes', '1 leftover process']);
  assert.equal(s.allowlist.length, 2);
  assert.equal(s.allowlist[0], 'logs/');
  assert.match(s.allowlist[1], /^symlink-escape.*:cache\/passwd$/);
  await look(page, 'allowed', notBlank);

  // n walks the violations; config.json's detail is a colored text diff.
  for (let i = 0; i < 6 && (await status(page)).selected !== 'config.json'; i++) {
    const before = (await status(page)).selected;
    await page.keyboard.press('n');
    await page.waitForFunction((b) => window.diffgate.selected !== b, before, { timeout: 5_000 }).catch(() => {});
  }
  assert.equal((await status(page)).selected, 'config.json');
  await look(page, 'text-diff', (img) => {
    const detail = { x: 450, y: banner.y + banner.height, width: 560, height: 500 };
    assert.ok(count(img, hex('#dafbe1'), 6, detail) > 2000, 'no green (added) diff lines');
    assert.ok(count(img, hex('#ffebe9'), 6, detail) > 2000, 'no red (removed) diff lines');
  });

  const al = await download(page, 'download-allowlist');
  assert.equal(al.name, 'allowlist.txt');
  const entries = al.text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
  assert.deepEqual(entries, s.allowlist);
  assert.match(al.text, /# verdict with this allowlist: FAIL \(4 unexpected changes, 1 leftover process\)/);

  const rep = await download(page, 'download-report');
  assert.match(rep.name, /^diffgate-demo-workspace-.*\.json$/);
  const r = JSON.parse(rep.text);
  assert.equal(r.schema, 'diffgate.report/v1');
  assert.equal(r.verdict, 'fail');
  assert.deepEqual(r.allowlist, s.allowlist);
  assert.equal(r.changes.filter((c) => !c.allowed).length, 4);
});

test('a passing report from the welcome page is green, also in the dark', async (t) => {
  for (const [scheme, c] of [['light', light], ['dark', dark]]) {
    const page = await open(t, '', scheme);
    if (scheme === 'dark') await look(page, 'welcome-dark', notBlank);
    await pick(page, 'welcome-open', 'pass.json');
    const s = await until(page, (s) => s.source === 'pass.json', 'pass.json to open');
    assert.equal(s.verdict, 'pass');
    assert.equal(s.violations, 0);
    assert.equal(s.allowed, 1);
    assert.equal(s.added, 1);
    const banner = await rect(page, 'banner');
    await look(page, `pass-report-${scheme}`, (img) => {
      notBlank(img);
      const green = count(img, c.pass, 10, banner);
      assert.ok(green > 800, `PASS banner (${scheme}): ${green} green pixels`);
      assert.ok(count(img, c.fail, 10, banner) < 50, `red in the PASS banner (${scheme})`);
    });
  }
});

test('?report= loads a CI artifact; a report dropped on the page replaces it', async (t) => {
  const page = await open(t, '?report=fixtures/fail.json');
  let s = await until(page, (s) => s.source === 'fixtures/fail.json', 'the linked report');
  assert.equal(s.verdict, 'fail');
  assert.equal(s.violations, 5);
  assert.equal(s.error, '');

  // A drop: dragover shows the drop frame, drop opens the file.
  const text = fs.readFileSync(path.join(fixtures, 'pass.json'), 'utf8');
  const shown = await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'dropped.json', { type: 'application/json' }));
    const canvas = document.querySelector('canvas');
    canvas.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    const frame = getComputedStyle(document.getElementById('diffgate-drop')).display;
    canvas.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    return frame;
  }, text);
  assert.equal(shown, 'flex', 'no drop frame while dragging');
  s = await until(page, (s) => s.source === 'dropped.json', 'the dropped report');
  assert.equal(s.verdict, 'pass');
  assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('diffgate-drop')).display), 'none');
});

test('malformed reports show an error in the page, never a blank screen', async (t) => {
  const page = await open(t, '?report=fixtures/not-json.json');
  let s = await until(page, (s) => s.error !== '', 'an error');
  assert.match(s.error, /^Could not open fixtures\/not-json\.json: not a diffgate report: the file is not JSON$/);
  assert.equal(s.verdict, '');
  const bar = await rect(page, 'error-bar');
  await look(page, 'error-not-json', (img) => {
    notBlank(img);
    const red = reddish(img, bar);
    assert.ok(red > bar.width * bar.height * 0.6, `the error bar is not red: ${red} reddish pixels`);
  });
  assert.ok(await page.evaluate(() => window.diffgateRect('welcome-open')), 'the welcome page is gone');

  await pick(page, 'open', 'truncated.json');
  s = await until(page, (s) => /truncated\.json/.test(s.error), 'the truncated report error');
  assert.equal(s.error, 'Could not open truncated.json: not a diffgate report: the JSON is truncated');
  await look(page, 'error-truncated', notBlank);

  await pick(page, 'open', 'wrong-schema.json');
  s = await until(page, (s) => /wrong-schema/.test(s.error), 'the wrong schema error');
  assert.match(s.error, /schema "diffgate\.report\/v2", want "diffgate\.report\/v1"/);

  await pick(page, 'open', 'before.json');
  s = await until(page, (s) => /before\.json/.test(s.error), 'the manifest error');
  assert.match(s.error, /before\.json is a snapshot manifest, not a report: use Compare snapshots/);

  // A good report clears the error; a bad one afterwards keeps it shown.
  await pick(page, 'open', 'fail.json');
  s = await until(page, (s) => s.source === 'fail.json', 'fail.json to open');
  assert.equal(s.error, '');
  await pick(page, 'open', 'not-json.json');
  s = await until(page, (s) => s.error !== '', 'an error');
  assert.equal(s.source, 'fail.json');
  assert.equal(s.verdict, 'fail');
  const banner = await rect(page, 'banner');
  await look(page, 'error-over-report', (img) => {
    assert.ok(count(img, light.fail, 10, banner) > 800, 'the report is gone');
  });
  await click(page, 'error-close');
  s = await until(page, (s) => s.error === '', 'the error to be dismissed');
});

test('?report= that is missing or on another site says so', async (t) => {
  let page = await open(t, '?report=fixtures/missing.json');
  let s = await until(page, (s) => s.error !== '', 'an error');
  assert.equal(s.error, 'Could not load fixtures/missing.json: HTTP 404 Not Found');
  await look(page, 'error-404', notBlank);

  page = await open(t, '?report=' + encodeURIComponent('http://example.invalid/report.json'));
  s = await until(page, (s) => s.error !== '', 'an error');
  assert.match(s.error, /only reports on this site can be linked/);
});

test('two snapshots compared with an allowlist', async (t) => {
  const page = await open(t);
  await click(page, 'compare');
  await until(page, (s) => s.compare, 'the compare dialog');
  await pick(page, 'compare-before', 'seed-before.json');
  await pick(page, 'compare-after', 'after.json');
  await typeInto(page, 'compare-allowlist', ['.cache/', 'logs/run.log']);
  const run = await rect(page, 'compare-run');
  assert.equal(run.disabled, false, 'Compare is disabled');
  await look(page, 'compare-dialog', notBlank);
  await click(page, 'compare-run');
  let s = await until(page, (s) => s.source === 'seed-before.json vs after.json', 'the comparison');
  assert.equal(s.compare, false);
  assert.equal(s.verdict, 'fail');
  assert.deepEqual(s.allowlist, ['.cache/', 'logs/run.log']);
  // A seed snapshot on one side: files only, by size and SHA-256, as the seed's diff.py.
  assert.deepEqual({ added: s.added, removed: s.removed, changed: s.changed, violations: s.violations, allowed: s.allowed },
    { added: 2, removed: 1, changed: 1, violations: 2, allowed: 2 });
  assert.deepEqual(s.reasons, ['2 unexpected changes']);
  const banner = await rect(page, 'banner');
  await look(page, 'compare-report', (img) => {
    assert.ok(count(img, light.fail, 10, banner) > 800, 'FAIL banner not red');
  });

  // Keep drafting in the review view's allowlist editor.
  await typeInto(page, 'allowlist-editor', ['build.lock', 'config.json'], { append: true });
  s = await until(page, (s) => s.verdict === 'pass', 'the draft to pass');
  assert.equal(s.violations, 0);
  await look(page, 'compare-pass', (img) => {
    assert.ok(count(img, light.pass, 10, banner) > 800, 'PASS banner not green');
  });
});
