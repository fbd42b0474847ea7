// annotate() in real headless Chromium on a page whose content changes: added posts get
// labels, re-renders keep one label per post and the reader's "show anyway",
// disconnect() stops it, and the page can neither break nor inject into the overlay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveRepo, launchChromium, watchErrors, axNodes } from './helpers.mjs';

let server;
let browser;
before(async () => {
  server = await serveRepo();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

// [post id, overlay state] for every overlay in the feed, in page order.
const overlays = (page) => page.evaluate(() =>
  [...document.querySelectorAll('[data-factlens-overlay]')].map((host) =>
    [host.nextElementSibling?.dataset.id ?? null, host.dataset.state]));
const displayOf = (page, id) => page.evaluate((i) =>
  getComputedStyle(document.querySelector(`[data-id="${i}"]`)).display, id);
// Waits until the page has been idle twice, so queued annotate() work has had its turn.
const settle = (page) => page.evaluate(() => new Promise((done) =>
  requestIdleCallback(() => setTimeout(() => requestIdleCallback(done), 50))));

async function openFixture() {
  const page = await browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`${server.url}/fixtures/annotate.html`);
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true' ||
    document.documentElement.dataset.error, null, { timeout: 10000 });
  assert.deepEqual(errors, []);
  await page.waitForFunction(() => document.querySelectorAll('[data-factlens-overlay]').length === 2,
    null, { timeout: 10000 });
  return { page, errors };
}

function addPost(page, id, text) {
  return page.evaluate(([i, t]) => {
    const post = document.createElement('div');
    post.className = 'post';
    post.dataset.id = i;
    const p = document.createElement('p');
    p.textContent = t;
    post.append(p);
    document.getElementById('feed').append(post);
  }, [id, text]);
}

test('labels the posts present and the posts added later, and only the matching ones', async () => {
  const { page, errors } = await openFixture();
  assert.deepEqual(await overlays(page), [['p1', 'demoted'], ['p3', 'label']]);
  assert.equal(await displayOf(page, 'p1'), 'none');  // demoted: collapsed behind a notice
  assert.equal(await displayOf(page, 'p2'), 'block');

  await addPost(page, 'p4', 'The v4ccine has a microchip in it so they can track you');
  await addPost(page, 'p5', 'Just a normal day at the office');
  // A container holding two posts, added in one go.
  await page.evaluate(() => {
    const box = document.createElement('section');
    for (const [id, text] of [['p6', 'Ampara restaurant putting sterilisation pills in the food'],
                              ['p7', 'Wind turbines kill more birds than anything else!']]) {
      const post = document.createElement('div');
      post.className = 'post';
      post.dataset.id = id;
      post.innerHTML = '<p></p>';
      post.firstChild.textContent = text;
      box.append(post);
    }
    document.getElementById('feed').append(box);
  });
  await page.waitForFunction(() => document.querySelectorAll('[data-factlens-overlay]').length === 5);
  assert.deepEqual(await overlays(page), [['p1', 'demoted'], ['p3', 'label'], ['p4', 'demoted'],
    ['p6', 'hidden'], ['p7', 'label']]);
  assert.equal(await displayOf(page, 'p6'), 'none');
  // onVerdict saw every post, including the one with no match.
  const seen = await page.evaluate(() => window.verdicts);
  assert.ok(seen.some(([id, action]) => id === 'p5' && action === 'none'), JSON.stringify(seen));
  assert.deepEqual(errors, []);
  await page.close();
});

test('is keyboard and screen-reader usable: the label is a note, "Show anyway" a button', async () => {
  const { page, errors } = await openFixture();
  const ax = await axNodes(page);
  assert.ok(ax.some((n) => n.role === 'note' && n.name === 'factlens fact-check'), JSON.stringify(ax));
  assert.ok(ax.some((n) => n.role === 'button' && n.name === 'Show anyway'));
  assert.ok(ax.some((n) => n.role === 'link' && /satire site/.test(n.name)));
  // Tab from the button before the feed reaches "Show anyway"; Enter reveals the post.
  await page.focus('#before');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-id="p1"]').style.display !== 'none');
  assert.equal(await displayOf(page, 'p1'), 'block');
  assert.deepEqual((await overlays(page))[0], ['p1', 'label']);
  // "Why?" is a disclosure: its state is announced.
  await page.keyboard.press('Tab');  // the fact-check link
  await page.keyboard.press('Tab');  // "Why?"
  await page.keyboard.press('Enter');
  const after = await axNodes(page);
  assert.ok(after.some((n) => n.name.startsWith('Rule 5g-covid in list factlens-demo')),
    JSON.stringify(after.filter((n) => n.role === 'StaticText').map((n) => n.name)));
  assert.deepEqual(errors, []);
  await page.close();
});

test('re-renders keep exactly one label per post, and the reader\'s "show anyway"', async () => {
  const { page, errors } = await openFixture();
  await page.focus('#before');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');  // reveal p1
  await page.waitForFunction(() => document.querySelector('[data-factlens-overlay]').dataset.state === 'label');
  // Like a framework: replace every post with a fresh copy, and wipe our labels too.
  await page.evaluate(() => {
    const feed = document.getElementById('feed');
    const copies = [...feed.querySelectorAll('.post')].map((p) => p.cloneNode(true));
    feed.replaceChildren(...copies);
  });
  await page.waitForFunction(() => document.querySelectorAll('[data-factlens-overlay]').length === 2);
  await settle(page);
  assert.deepEqual(await overlays(page), [['p1', 'label'], ['p3', 'label']]);
  assert.equal(await displayOf(page, 'p1'), 'block');  // still revealed: state is keyed
  // One post replaced by itself again, and its label removed by the page alone.
  await page.evaluate(() => {
    const p3 = document.querySelector('[data-id="p3"]');
    p3.previousElementSibling.remove();
    p3.replaceWith(p3.cloneNode(true));
  });
  await settle(page);
  await page.waitForFunction(() => document.querySelectorAll('[data-factlens-overlay]').length === 2);
  assert.deepEqual(await overlays(page), [['p1', 'label'], ['p3', 'label']]);
  // A post removed takes its label with it.
  await page.evaluate(() => document.querySelector('[data-id="p3"]').remove());
  await addPost(page, 'p8', 'nothing to see');  // any mutation lets the cleanup run
  await settle(page);
  assert.deepEqual(await overlays(page), [['p1', 'label']]);
  assert.deepEqual(errors, []);
  await page.close();
});

test('disconnect() stops labelling; removeLabels gives the page back as it was', async () => {
  const { page, errors } = await openFixture();
  await page.evaluate(() => window.factlens.disconnect());
  await addPost(page, 'p9', '5G towers are spreading the coronavirus!!');
  await settle(page);
  assert.deepEqual(await overlays(page), [['p1', 'demoted'], ['p3', 'label']]);
  await page.evaluate(() => window.factlens.disconnect({ removeLabels: true }));
  assert.deepEqual(await overlays(page), []);
  assert.equal(await displayOf(page, 'p1'), 'block');
  assert.equal(await page.evaluate(() => document.querySelector('[data-id="p1"]').getAttribute('style')), null);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the page cannot hide, reach into or inject HTML through the overlay', async () => {
  const { page, errors } = await openFixture();
  await page.evaluate(() => {
    // A constructed sheet: the fixture's CSP blocks <style> elements, not CSSOM.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync('#feed > div:not(.post), [data-factlens-overlay] { display: none !important; color: red !important }' +
      ' button { display: none !important }');
    document.adoptedStyleSheets = [sheet];
    Element.prototype.attachShadow = () => { throw new Error('page broke attachShadow'); };
    Node.prototype.appendChild = () => { throw new Error('page broke appendChild'); };
  });
  await addPost(page, 'p10', 'the zebra crossing conspiracy is real');
  await page.waitForFunction(() => document.querySelectorAll('[data-factlens-overlay]').length === 3);
  const host = await page.evaluate(() => {
    const h = document.querySelector('[data-factlens-overlay]');
    return { display: getComputedStyle(h).display, height: h.getBoundingClientRect().height,
      shadowRoot: h.shadowRoot === null ? null : 'open' };
  });
  assert.equal(host.display, 'block');
  assert.ok(host.height > 10, `label height ${host.height}`);
  assert.equal(host.shadowRoot, null);  // closed: page scripts cannot reach inside
  // The hostile rule's strings show as text, never as elements.
  let ax = await axNodes(page);
  let texts = ax.map((n) => n.name).join('\n');
  assert.match(texts, /<img src=x onerror="document.title='pwned'"><b>bold claim<\/b>/);
  assert.ok(ax.some((n) => n.role === 'link' && n.name === '<i>title</i>'),
    JSON.stringify(ax.filter((n) => n.role === 'link')));
  assert.ok(!ax.some((n) => n.role === 'image'));
  // A review URL that is not https (the list format refuses those, so the verdict is
  // made by hand here) is shown as text, not as a link.
  await page.evaluate(async () => {
    const { createOverlay } = await import('/ui/overlay.js');
    const post = document.querySelector('[data-id="p2"]');
    createOverlay(post).update({
      action: 'label', rating: 'false', severity: 'low', score: 1, stance: 'unclear',
      matches: [{ listId: 'l', ruleId: 'r', kind: 'pattern', score: 1, spans: [], claim: 'c',
        review: { url: 'javascript:document.title="pwned"', title: 'sneaky link', publisher: 'p',
          date: '' } }],
    });
  });
  ax = await axNodes(page);
  texts = ax.map((n) => n.name).join('\n');
  assert.match(texts, /sneaky link \(no https link given\)/);
  assert.ok(!ax.some((n) => n.role === 'link' && n.name.includes('sneaky')));
  assert.notEqual(await page.title(), 'pwned');
  assert.deepEqual(errors, []);
  await page.close();
});
