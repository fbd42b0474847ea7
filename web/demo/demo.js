// The demo page: a sample feed annotated by annotate() with the demo list, and a rule
// playground (edit a list, see verdicts live; import ClaimReview markup into it; load a
// signed list by URL and key).
// Everything from lists, posts and the network is put in the page with textContent.
import { createEngine, annotate, importClaimReview, FactlensError } from '../browser.js';
import { isHttpsUrl } from '../ui/overlay.js';

const $ = (id) => document.getElementById(id);
const el = (tag, text, className) => {
  const node = document.createElement(tag);
  if (text != null) node.textContent = text;
  if (className) node.className = className;
  return node;
};

async function fetchText(url) {
  const response = await fetch(url, { credentials: 'omit' });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.text();
}

// ---- the feed -------------------------------------------------------------------
const AUTHORS = ['Ada', 'Bilal', 'Chen', 'Dilani', 'Emeka', 'Freya', 'Gustavo', 'Hana',
  'Ivan', 'Jamal', 'Kiri', 'Lotte'];

function postItem(text, author) {
  const item = el('li');
  const article = el('article', null, 'post');
  article.append(el('div', `@${author.toLowerCase()}`, 'author'), el('p', text));
  item.append(article);
  return item;
}

async function startFeed(listText) {
  const posts = (await fetchText('/lists/demo-posts.txt')).split('\n').filter((l) => l.trim());
  const engine = await createEngine();
  engine.loadList(listText, { allowUnsigned: true });  // the demo list is an unsigned draft
  const feed = $('feed');
  posts.forEach((text, i) => feed.append(postItem(text, AUTHORS[i % AUTHORS.length])));
  const handle = annotate(feed, {
    engine,
    selector: 'article.post',
    textOf: (post) => post.querySelector('p')?.textContent ?? '',
  });
  $('compose').addEventListener('submit', (event) => {
    event.preventDefault();
    const text = $('compose-text').value.trim();
    if (text) feed.prepend(postItem(text, 'You'));  // annotate() sees it by itself
  });
  handle.flush();
}

// ---- the playground ---------------------------------------------------------------
let playground;  // its own engine, so edits never touch the feed's
let listOk = false;
let lastGood = null;  // [text, options] of the list in use

// Makes `text` the playground's only list. The engine refuses an older or different
// same-version list over a loaded one (rollback protection, right for readers); an
// editor replaces freely, so the old list goes first and comes back if the new fails.
function replaceList(text, options) {
  for (const l of playground.lists()) playground.unloadList(l.id);
  try {
    const info = playground.loadList(text, options);
    lastGood = [text, options];
    return info;
  } catch (error) {
    if (lastGood) {
      try {
        playground.loadList(...lastGood);
      } catch {
        lastGood = null;  // e.g. expired since: nothing in use; results show as stale
      }
    }
    throw error;
  }
}

// Where an engine error points in the editor: "line L, column C" (syntax; C counts
// UTF-8 bytes), or `rules[i] (id "x"): field` (semantic; we find the rule's id).
function locate(text, message) {
  const syntax = /line (\d+), column (\d+)/.exec(message);
  if (syntax) {
    const lines = text.split('\n');
    const line = Math.min(Number(syntax[1]), lines.length) - 1;
    let offset = lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0);
    let bytes = Number(syntax[2]) - 1;
    for (const ch of lines[line]) {
      const size = new TextEncoder().encode(ch).length;
      if (bytes < size) break;
      bytes -= size;
      offset += ch.length;
    }
    return offset;
  }
  const semantic = /^rules\[(\d+)\](?: \(id "((?:[^"\\]|\\.)*)"\))?(?::\s*([\w.]+))?/.exec(message);
  if (semantic) {
    const rulesAt = text.search(/"rules"\s*:/);
    let at = rulesAt < 0 ? 0 : rulesAt;
    if (semantic[2] != null) {
      const quoted = JSON.stringify(JSON.parse(`"${semantic[2]}"`));
      const idRe = new RegExp(`"id"\\s*:\\s*${quoted.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
      const found = text.slice(at).search(idRe);
      if (found >= 0) at += found;
    }
    const field = semantic[3]?.split('.').pop()?.replace(/\[\d+\]$/, '');
    if (field) {
      const next = text.slice(at).search(new RegExp(`"${field}"\\s*:`));
      if (next >= 0 && next < 4000) at += next;
    }
    return at;
  }
  return null;
}

function showListError(text, error) {
  const status = $('list-status');
  status.className = 'status error';
  status.textContent = `${error.kind} error: ${error.message}`;
  const offset = locate(text, error.message);
  const excerpt = $('list-excerpt');
  const goto = $('goto-error');
  if (offset == null) {
    excerpt.hidden = true;
    goto.hidden = true;
    return;
  }
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const lineEnd = text.indexOf('\n', offset);
  const line = text.slice(lineStart, lineEnd < 0 ? undefined : lineEnd);
  const lineNo = text.slice(0, lineStart).split('\n').length;
  const prefix = `${lineNo} | `;
  excerpt.textContent = `${prefix}${line}\n${' '.repeat(prefix.length + offset - lineStart)}^`;
  excerpt.hidden = false;
  goto.hidden = false;
  goto.onclick = () => {
    const editor = $('list-editor');
    editor.focus();
    editor.setSelectionRange(offset, Math.min(offset + 1, text.length));
  };
}

function loadDraft() {
  const text = $('list-editor').value;
  try {
    const info = replaceList(text, { allowUnsigned: true });
    listOk = true;
    const status = $('list-status');
    status.className = 'status ok';
    status.textContent = `${info.name} (${info.id}) v${info.version}: ${info.ruleCount} rules, ` +
      (info.signed ? 'signed and verified' : 'unsigned draft');
    $('list-excerpt').hidden = true;
    $('goto-error').hidden = true;
  } catch (error) {
    if (!(error instanceof FactlensError)) throw error;
    listOk = false;  // the engine keeps the last good list; results show as stale
    showListError(text, error);
  }
  renderResults();
}

function highlighted(text, spans) {
  const merged = [];
  for (const [s, e] of [...spans].sort((a, b) => a[0] - b[0])) {
    const last = merged[merged.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  const p = el('p');
  let at = 0;
  for (const [s, e] of merged) {
    p.append(document.createTextNode(text.slice(at, s)), el('mark', text.slice(s, e)));
    at = e;
  }
  p.append(document.createTextNode(text.slice(at)));
  return p;
}

function renderResults() {
  const posts = $('posts-editor').value.split('\n').filter((l) => l.trim());
  const region = $('region').value.trim();
  const verdicts = playground.checkBatch(posts, region ? { region } : undefined);
  const results = $('results');
  results.replaceChildren();
  posts.forEach((text, i) => {
    const v = verdicts[i];
    const item = el('li', null, listOk ? 'result' : 'result stale');
    item.dataset.action = v.action;
    const head = el('div');
    head.append(el('span', v.action, `action action-${v.action}`));
    if (v.matches.length) {
      head.append(document.createTextNode(
        `${v.rating}, ${v.severity} · score ${v.score.toFixed(2)} · stance ${v.stance}`));
    }
    item.append(head, highlighted(text, v.matches.flatMap((m) => m.spans)));
    for (const m of v.matches) {
      const meta = el('div', `${m.ruleId} (${m.kind}, ${m.score.toFixed(2)}): ${m.claim} `, 'meta');
      if (isHttpsUrl(m.review.url)) {
        const link = el('a', m.review.publisher || 'fact-check');
        link.href = m.review.url;
        link.rel = 'noopener noreferrer';
        link.target = '_blank';
        meta.append(link);
      }
      item.append(meta);
    }
    results.append(item);
  });
}

function debounce(fn, ms) {
  let timer;
  return () => { clearTimeout(timer); timer = setTimeout(fn, ms); };
}

// A signed list: fetched (https, or this server), then loadList with the signature
// and the pinned key. The engine refuses a list whose signature fails; we show why.
async function loadSigned(event) {
  event.preventDefault();
  const status = $('signed-status');
  status.className = 'status';
  status.textContent = 'Fetching...';
  try {
    const listUrl = new URL($('signed-url').value, location.href);
    const sigUrl = new URL($('signed-sig').value || `${listUrl.href}.minisig`, location.href);
    for (const u of [listUrl, sigUrl]) {
      if (u.protocol !== 'https:' && u.origin !== location.origin) {
        throw new Error(`${u.href}: only https URLs (or this demo's own server) are fetched`);
      }
    }
    const publicKey = $('signed-key').value.trim();
    if (!publicKey) throw new Error('the publisher\'s public key is needed to verify the list');
    const [text, signature] = await Promise.all([fetchText(listUrl), fetchText(sigUrl)]);
    const info = replaceList(text, { signature, publicKey });
    $('list-editor').value = text;
    listOk = true;
    status.className = 'status ok';
    status.textContent = `Verified and loaded ${info.name} v${info.version} (${info.ruleCount} rules). ` +
      'Editing it in the playground turns it into an unsigned draft.';
    $('list-status').className = 'status ok';
    $('list-status').textContent = `${info.name} (${info.id}) v${info.version}: signed and verified`;
    renderResults();
  } catch (error) {
    status.className = 'status error';
    status.textContent = error instanceof FactlensError
      ? `Refused (${error.kind}): ${error.message}` : `Failed: ${error.message}`;
  }
}

// ClaimReview import: the engine's importer (the code `factlens import --merge` runs)
// merges the snippet's claims into the list being edited. Its reports point into the
// pasted text; the snippet is hostile like any page, so all of it goes in as text.
function showImportMessages(messages) {
  const list = $('import-messages');
  list.replaceChildren();
  for (const m of messages) {
    const where = m.line != null ? `line ${m.line}, column ${m.column}: ` : '';
    const item = el('li', `${where}${m.severity}: ${m.message}`, m.severity);
    if (m.line != null) {
      item.dataset.line = String(m.line);
      item.title = 'Show in the pasted text';
      item.addEventListener('click', () => {
        const editor = $('import-text');
        const lines = editor.value.split('\n');
        const offset = lines.slice(0, m.line - 1).reduce((n, l) => n + l.length + 1, 0) +
          m.column - 1;
        editor.focus();
        editor.setSelectionRange(offset, Math.min(offset + 1, editor.value.length));
      });
    }
    list.append(item);
  }
}

async function importSnippet(event) {
  event.preventDefault();
  const status = $('import-status');
  const text = $('import-text').value;
  if (!text.trim()) {
    status.className = 'status error';
    status.textContent = 'Paste ClaimReview JSON-LD or an HTML page first.';
    return;
  }
  status.className = 'status';
  status.textContent = 'Importing...';
  try {
    const result = await importClaimReview(text, {
      merge: $('list-editor').value,
      pageUrl: $('import-page-url').value.trim() || undefined,
      keywords: $('import-keywords').checked,
    });
    showImportMessages(result.messages);
    const added = result.changes.filter((c) => c.kind === 'added').map((c) => c.ruleId);
    const updated = result.changes.filter((c) => c.kind === 'updated').map((c) => c.ruleId);
    const problems = result.messages.filter((m) => m.severity === 'error').length;
    status.className = problems ? 'status error' : 'status ok';
    status.textContent = `${result.shape}: ${result.reviews} review(s) read; ` +
      `${result.added} added${added.length ? ` (${added.join(', ')})` : ''}, ` +
      `${result.updated} updated${updated.length ? ` (${updated.join(', ')})` : ''}, ` +
      `${result.unchanged} unchanged, ${result.kept} kept, ${result.skipped} left out` +
      (result.versionBumped ? `; version ${result.version}` : '') +
      (problems ? `; ${problems} problem(s) below` : '');
    if (result.added || result.updated || result.versionBumped) {
      $('list-editor').value = result.list;
      loadDraft();
    }
  } catch (error) {
    if (!(error instanceof FactlensError)) throw error;
    showImportMessages(error.messages ?? []);
    status.className = 'status error';
    status.textContent = `Nothing imported (${error.kind}): ${error.message}`;
  }
}

async function startPlayground(listText) {
  playground = await createEngine();
  $('list-editor').value = listText;
  $('posts-editor').value = [
    'The earth is flat and NASA knows it',
    'Wind turbines kill more birds than anything else!',
    'They put sterilisation pills in the kottu at that shop',
    'Lovely sunset over the harbour tonight',
  ].join('\n');
  const reload = debounce(loadDraft, 150);
  $('list-editor').addEventListener('input', reload);
  $('posts-editor').addEventListener('input', debounce(renderResults, 100));
  $('region').addEventListener('input', debounce(renderResults, 100));
  $('signed-form').addEventListener('submit', loadSigned);
  $('import-form').addEventListener('submit', importSnippet);
  $('import-sample').addEventListener('click', () => {
    fetchText('/lists/claimreview-sample.html').then((page) => { $('import-text').value = page; },
      (error) => { $('import-status').textContent = `Failed: ${error.message}`; });
  });
  // The demo key, to try the signed-list path against /signed/demo.json (npm start
  // signs the demo list with it). Only the public key is served.
  fetchText('/keys/demo.pub').then((key) => { $('signed-key').value = key.trim(); },
    () => { /* not served (e.g. web/ served alone): the field stays empty */ });
  loadDraft();
}

async function main() {
  const listText = await fetchText('/lists/demo.json');
  await Promise.all([startFeed(listText), startPlayground(listText)]);
  document.documentElement.dataset.ready = 'true';
}

main().catch((error) => {
  document.documentElement.dataset.error = String(error?.message ?? error);
  const status = el('p', `The demo could not start: ${error?.message ?? error}`, 'status error');
  document.body.prepend(status);
});
