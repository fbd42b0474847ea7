// Shared by the popup and the options page: i18n of static text and the subscription
// list. Every string from a list or a server (names, URLs, error messages) is set with
// textContent.

const msg = (name, ...subs) => chrome.i18n.getMessage(name, subs) || name;

/** Fills every [data-i18n] element's text with its message. */
export function localise(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = msg(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) {
    el.placeholder = msg(el.dataset.i18nPlaceholder);
  }
  document.documentElement.lang = chrome.i18n.getUILanguage();
}

/** Sends `message` to the background; throws its error text if refused. */
export async function ask(message) {
  const answer = await chrome.runtime.sendMessage(message);
  if (!answer?.ok) throw new Error(answer?.message ?? 'no answer from the background');
  return answer;
}

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text != null) node.textContent = String(text);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

/** Draws the subscriptions into `list` (a <ul>); `onRemove(url)` adds remove buttons. */
export function renderSubscriptions(list, subscriptions, { onRemove } = {}) {
  list.replaceChildren();
  if (!subscriptions.length) list.append(el('li', msg('status_none')));
  for (const sub of subscriptions) {
    const item = el('li', null, { 'data-state': sub.state });
    item.append(el('strong', sub.list ? sub.list.name : sub.url), document.createTextNode(' '));
    item.append(el('span', msg(`state_${sub.state.replace('-', '_')}`), { class: 'state' }));
    if (sub.list) {
      item.append(el('div', msg('status_list', String(sub.list.version), String(sub.list.ruleCount),
                                sub.list.expires), { class: 'detail' }));
    }
    item.append(el('div', sub.url, { class: 'url' }));
    if (sub.error) item.append(el('div', sub.error.message, { class: 'error', role: 'status' }));
    if (sub.error && sub.nextAttemptAt) {  // back-off: when it failed first, when it tries again
      item.append(el('div', msg('status_retry', when(sub.failingSince ?? sub.error.at), when(sub.nextAttemptAt)),
                     { class: 'detail retry' }));
    }
    if (onRemove) {
      const button = el('button', msg('options_remove'), { type: 'button' });
      button.addEventListener('click', () => onRemove(sub.url));
      item.append(button);
    }
    list.append(item);
  }
}

/** The switchable sites, as content/adapters.js FACTLENS_SITES lists them (a test keeps
 *  the two equal). */
export const SITES = Object.freeze(['x', 'facebook', 'reddit', 'mastodon', 'bluesky',
  'youtube', 'threads', 'linkedin', 'generic']);

/** Returns the reader's site switches: { sites: {id: bool}, hosts: {hostname: bool} }. */
export async function getSwitches() {
  const { siteSwitches } = await chrome.storage.local.get('siteSwitches');
  const plain = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});
  return { sites: { ...plain(siteSwitches?.sites) }, hosts: { ...plain(siteSwitches?.hosts) } };
}

/** Tells the content scripts of every open tab to read the reader's settings again. */
export async function settingsChanged() {
  const tabs = await chrome.tabs.query({});
  await Promise.all(tabs.map((tab) =>
    chrome.tabs.sendMessage(tab.id, { type: 'settings-changed' }).catch(() => {})));
}

/** Changes the switches with `change(switches)`, stores them and tells the tabs. */
export async function setSwitches(change) {
  const switches = await getSwitches();
  change(switches);
  await chrome.storage.local.set({ siteSwitches: switches });
  await settingsChanged();
  return switches;
}

export { msg, el };

const when = (ms) => new Date(ms).toLocaleString();

// The engine's state (background.js keeps it in storage as `engineStatus`): one quiet
// line above the subscriptions when the engine was restarted after a fault or is
// failing, on both the popup and the options page.
async function showEngine() {
  const { engineStatus } = await chrome.storage.local.get('engineStatus');
  const list = document.getElementById('subs');
  if (!list) return;
  let line = document.getElementById('engine');
  if (!line) {
    line = el('p', null, { id: 'engine', role: 'status', class: 'engine' });
    list.before(line);
  }
  const state = engineStatus?.state ?? 'ok';
  line.dataset.state = state;
  line.textContent = state === 'restarted'
    ? msg('engine_restarted', when(engineStatus.lastFault?.at ?? Date.now()))
    : state === 'failed' ? msg('engine_failed') : '';
  line.hidden = state === 'ok';
}
if (globalThis.chrome?.storage) {  // not when a Node test imports this module
  showEngine();
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === 'local' && changes.engineStatus) showEngine();
  });
}
