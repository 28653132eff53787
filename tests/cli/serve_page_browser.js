// `edgemm serve`'s page at GET / (docs/serve.md "The page") in a real browser: Debian's chromium,
// headless, driven by puppeteer-core (pinned in tools/reference/package.json). Run by
// serve_page_test.sh, which starts the servers and computes the oracles with the other commands.
// Prints one line per check, "ok NAME" or "FAIL NAME: why"; exits 1 when it could not go on.
//
// The page's elements it relies on: #api-key, #models-status and #ocr-status, #chat-status,
// #clip-status (data-state "busy", "done" or "error"; the text is the server's error message),
// #model-ocr/-clip/-vlm (class "loaded"), sections #ocr, #vlm, #clip (class "hidden" when the model
// is not loaded); OCR: #ocr-file, #ocr-canvas, #ocr-lines with one <li> per line whose textContent
// is exactly the line's text (the score is in data-score, shown by CSS, so not in the text); chat:
// #chat-file, #chat-image, #chat-input, #chat-send, #chat-temperature, #chat-max-tokens, .msg.assistant
// bubbles in #chat-log; retrieval: #clip-files, #clip-query, #clip-search, #clip-results figures
// with data-name and data-score.
//
// Usage: node serve_page_browser.js CONFIG_JSON, an object with
//   root, chromium, key; ocr: {base, image, want (edgemm ocr --json), screenshot, noise (a file that
//   is no image)}; chat (optional): {base, image, message, want (edgemm vqa --json), screenshot,
//   clip_images, clip_query, clip_want (edgemm retrieve --query --json)}
const fs = require('fs');
const path = require('path');
const {createRequire} = require('module');

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const puppeteer = createRequire(path.join(config.root, 'tools/reference/package.json'))('puppeteer-core');

function check(name, condition, why) {
  console.log(condition ? `ok ${name}` : `FAIL ${name}: ${why}`);
  return condition;
}

// Marks the status element #id stale, runs `action`, and returns the state and text the element
// has once the request answered ("done" or "error").
async function after(page, id, action, timeout = 120000) {
  await page.$eval('#' + id, (el) => {
    el.dataset.state = 'stale';
  });
  await action();
  return settled(page, id, timeout);
}

async function settled(page, id, timeout = 120000) {
  await page.waitForFunction(
      (id) => ['done', 'error'].includes(document.getElementById(id).dataset.state), {timeout, polling: 100}, id);
  return page.$eval('#' + id, (el) => ({state: el.dataset.state, text: el.textContent}));
}

const hidden = (page, id) => page.$eval('#' + id, (el) => el.classList.contains('hidden'));

// Watches a page for uncaught exceptions and Content-Security-Policy violations.
function watch(page) {
  const problems = [];
  page.on('pageerror', (e) => problems.push('exception: ' + e.message));
  page.on('console', (m) => /Content Security Policy/i.test(m.text()) && problems.push('CSP: ' + m.text()));
  return problems;
}

async function testOcr(browser) {
  const {base, image, want, screenshot, noise} = config.ocr;
  const page = await browser.newPage();
  await page.setViewport({width: 1400, height: 900});
  const problems = watch(page);

  // Without the key, /v1/models answers 401 and the page says so (GET / itself needs no key).
  await page.goto(base + '/', {waitUntil: 'load'});
  let status = await settled(page, 'models-status');
  check(
      'no-key-error-shown', status.state === 'error' && status.text.includes('missing or wrong API key'),
      JSON.stringify(status));
  const badges = (await page.$$('#models li')).length;
  check(
      'no-key-no-section', (await hidden(page, 'ocr')) && badges === 0,
      `without the key: #ocr hidden ${await hidden(page, 'ocr')}, ${badges} model badges`);

  // The key typed in: the models load, and the key is kept (localStorage) across a reload.
  status = await after(page, 'models-status', async () => {
    await page.type('#api-key', config.key);
    await page.keyboard.press('Tab');  // "change"
  });
  check('key-models-loaded', status.state === 'done', JSON.stringify(status));
  await page.reload({waitUntil: 'load'});
  status = await settled(page, 'models-status');
  check('key-kept-after-reload', status.state === 'done', JSON.stringify(status));
  const models = await page.$$eval('#models li', (items) => items.map((li) => [li.id, li.className, li.textContent]));
  check(
      'models-shown', JSON.stringify(models) === JSON.stringify([
        ['model-ocr', 'loaded', 'OCR: ppocrv4'], ['model-clip', '', 'CLIP: not loaded'],
        ['model-vlm', '', 'VLM: not loaded']
      ]),
      JSON.stringify(models));
  check(
      'sections-shown', !(await hidden(page, 'ocr')) && (await hidden(page, 'vlm')) && (await hidden(page, 'clip')),
      'only #ocr should be visible');

  // A file that is no image: the server's 400 message is shown.
  status = await after(page, 'ocr-status', async () => (await page.$('#ocr-file')).uploadFile(noise));
  check(
      'ocr-error-shown', status.state === 'error' && status.text.startsWith('HTTP 400: ') && status.text.length > 20,
      JSON.stringify(status));

  // The photo: the lines as `edgemm ocr --json` reads them, in its order, drawn on the canvas.
  status = await after(page, 'ocr-status', async () => (await page.$('#ocr-file')).uploadFile(image));
  const lines = want.images[0].lines;
  check(
      'ocr-done', status.state === 'done' && status.text.startsWith(`done: ${lines.length} lines`),
      JSON.stringify(status));
  const shown = await page.$$eval('#ocr-lines li', (items) => items.map((li) => [li.textContent, li.dataset.score]));
  check(
      'ocr-lines-equal-cli', JSON.stringify(shown.map((s) => s[0])) === JSON.stringify(lines.map((l) => l.text)),
      `page ${JSON.stringify(shown.map((s) => s[0]))} vs cli ${JSON.stringify(lines.map((l) => l.text))}`);
  check(
      'ocr-scores-shown',
      shown.length === lines.length && shown.every((s, i) => Math.abs(s[1] - lines[i].score) < 6e-4),
      JSON.stringify(shown.map((s) => s[1])));

  // The canvas: the image's size, the photo drawn (not a blank background), the first polygon's
  // top edge stroked in red.
  const canvas = await page.$eval('#ocr-canvas', (c, line) => {
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let light = 0;
    let red = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] > 245 && data[i + 1] > 245 && data[i + 2] > 245) light++;
      if (data[i] > 180 && data[i + 1] < 80 && data[i + 2] < 80) red++;
    }
    const [[x0, y0], [x1, y1]] = line.polygon;
    const edge = [...c.getContext('2d').getImageData(Math.round((x0 + x1) / 2), Math.round((y0 + y1) / 2), 1, 1).data];
    return {width: c.width, height: c.height, pixels: data.length / 4, light, red, edge};
  }, lines[0]);
  const {width, height} = want.images[0];
  check('canvas-size', canvas.width === width && canvas.height === height, JSON.stringify(canvas));
  check('canvas-image-drawn', canvas.light < canvas.pixels * 0.5, JSON.stringify(canvas));
  check(
      'canvas-polygons-drawn', canvas.red > 100 && canvas.edge[0] > 150 && canvas.edge[1] < 100,
      JSON.stringify(canvas));
  await page.screenshot({path: screenshot, fullPage: true});
  check('ocr-page-clean', problems.length === 0, problems.join('; '));
  await page.close();
}

async function testChatAndRetrieval(browser) {
  const c = config.chat;
  const page = await browser.newPage();
  await page.setViewport({width: 1400, height: 900});
  const problems = watch(page);
  const bodies = [];
  page.on('request', (r) => r.url().endsWith('/v1/chat/completions') && bodies.push(JSON.parse(r.postData())));
  await page.goto(c.base + '/', {waitUntil: 'load'});
  const status = await settled(page, 'models-status');
  check(
      'chat-models-loaded',
      status.state === 'done' && (await hidden(page, 'ocr')) && !(await hidden(page, 'vlm')) &&
          !(await hidden(page, 'clip')),
      JSON.stringify(status));

  // One greedy message about the image: the streamed text equals `edgemm vqa`'s answer.
  await (await page.$('#chat-file')).uploadFile(c.image);
  await page.waitForFunction(() => document.getElementById('chat-image').src.startsWith('data:image/png;base64,'));
  await page.$eval('#chat-temperature', (el) => {
    el.value = '0';
  });
  await page.$eval('#chat-max-tokens', (el) => {
    el.value = '12';
  });
  // Each change of a bubble's text is one piece of the stream shown.
  await page.$eval('#chat-log', (log) => {
    window.pieces = 0;
    new MutationObserver((records) => {
      window.pieces += records.filter((r) => r.type === 'childList').length;
    }).observe(log, {childList: true, subtree: true});
  });
  const send = (message) => after(page, 'chat-status', async () => {
    await page.type('#chat-input', message);
    await page.click('#chat-send');
  });
  let chat = await send(c.message);
  const bubbles = () => page.$$eval('.msg', (items) => items.map((m) => [m.className, m.textContent]));
  let shown = await bubbles();
  check('chat-done', chat.state === 'done', JSON.stringify(chat));
  check(
      'chat-answer-equals-vqa',
      JSON.stringify(shown) === JSON.stringify([['msg user', c.message], ['msg assistant', c.want.answer]]),
      `page ${JSON.stringify(shown)} vs vqa ${JSON.stringify(c.want.answer)}`);
  const pieces = await page.evaluate(() => window.pieces);
  check('chat-streamed', pieces >= 4, `${pieces} changes of #chat-log (2 bubbles and at least 2 pieces expected)`);
  const first = bodies[0] || {};
  check(
      'chat-request',
      first.stream === true && first.temperature === 0 && first.max_tokens === 12 &&
          JSON.stringify(first.messages[0].content.map((p) => p.type)) === '["image_url","text"]',
      JSON.stringify(first).slice(0, 300));

  // A second turn resends the conversation: the image in the first user message, the answer.
  chat = await send('And what colour is it?');
  const second = bodies[1] || {messages: []};
  const cached = Number((/(\d+) cached/.exec(chat.text) || [])[1]);
  check('chat-second-turn-cached', cached > 0, `status ${JSON.stringify(chat.text)}: the KV cache should be reused`);
  check(
      'chat-second-turn',
      chat.state === 'done' && JSON.stringify(second.messages.map((m) => m.role)) === '["user","assistant","user"]' &&
          second.messages[0].content[0].image_url.url.startsWith('data:image/png;base64,') &&
          second.messages[1].content === c.want.answer,
      JSON.stringify(chat) + ' ' + JSON.stringify(second.messages.map((m) => m.role)));

  // A server error (max_tokens 0 is refused with 400) is shown, and the turn is not kept.
  await page.$eval('#chat-max-tokens', (el) => {
    el.value = '0';
  });
  chat = await send('Once more?');
  shown = await bubbles();
  check(
      'chat-error-shown',
      chat.state === 'error' && chat.text.includes('\'max_tokens\'') && shown[shown.length - 1][0].includes('error') &&
          shown[shown.length - 1][1] === chat.text,
      JSON.stringify(chat) + ' ' + JSON.stringify(shown[shown.length - 1]));
  await page.$eval('#chat-max-tokens', (el) => {
    el.value = '12';
  });
  await send('And now?');
  const fourth = bodies[bodies.length - 1] || {messages: []};
  check(
      'chat-error-turn-dropped', fourth.messages.length === 5 && fourth.messages[4].content[0].text === 'And now?',
      JSON.stringify(fourth.messages.map((m) => m.content)).slice(0, 300));

  // Retrieval: the images ranked for the query as `edgemm retrieve --query` ranks them.
  const embedded =
      await after(page, 'clip-status', async () => (await page.$('#clip-files')).uploadFile(...c.clip_images));
  check(
      'clip-embedded', embedded.state === 'done' && embedded.text.startsWith(`done: ${c.clip_images.length} images`),
      JSON.stringify(embedded));
  const ranked = await after(page, 'clip-status', async () => {
    await page.type('#clip-query', c.clip_query);
    await page.click('#clip-search');
  });
  const results =
      await page.$$eval('#clip-results figure', (figures) => figures.map((f) => [f.dataset.name, +f.dataset.score]));
  const want = c.clip_want.results.map((r) => [path.basename(r.path), r.score]);
  check(
      'clip-ranking-equals-retrieve',
      ranked.state === 'done' && results.length === want.length &&
          results.every((r, i) => r[0] === want[i][0] && Math.abs(r[1] - want[i][1]) < 1e-5),
      `page ${JSON.stringify(results)} vs retrieve ${JSON.stringify(want)}`);
  await page.waitForFunction(() => [...document.querySelectorAll('#clip-results img')].every((i) => i.complete));
  const thumbnails =
      await page.$$eval('#clip-results img', (imgs) => imgs.filter((i) => i.complete && i.naturalWidth > 0).length);
  check('clip-thumbnails', thumbnails === want.length, `${thumbnails} thumbnails shown`);
  await page.screenshot({path: c.screenshot, fullPage: true});
  check('chat-page-clean', problems.length === 0, problems.join('; '));
  await page.close();
}

async function main() {
  const browser = await puppeteer.launch({
    executablePath: config.chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    await testOcr(browser);
    if (config.chat) await testChatAndRetrieval(browser);
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.log(`FAIL browser: ${e.stack || e}`);
  process.exit(1);
});
