// Popup: what was found on this page (asked of the tab's content script: counts and
// claims, never post text), the switch for this site, the subscriptions' state,
// "update now" and the way to the options page.
import { localise, ask, renderSubscriptions, setSwitches, msg, el } from './pages.js';

localise();
const list = document.getElementById('subs');
const show = ({ subscriptions }) => renderSubscriptions(list, subscriptions);
document.getElementById('update').addEventListener('click', async () => show(await ask({ type: 'update' })));
document.getElementById('options').addEventListener('click', () => chrome.runtime.openOptionsPage());
ask({ type: 'status' }).then(show);
// Downloads finish in the background: redraw when the stored state changes.
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && !changes.siteSwitches && !changes.dismissedPosts) ask({ type: 'status' }).then(show);
});

// The tab the popup is about: the active one; `?tab=<id>` names it where the popup is
// opened as a page of its own (the e2e tests do that).
async function currentTab() {
  const given = Number(new URLSearchParams(location.search).get('tab'));
  if (Number.isSafeInteger(given) && given > 0) return given;
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab?.id ?? null;
}

async function showPage() {
  const found = document.getElementById('found');
  const claims = document.getElementById('claims');
  const label = document.getElementById('site-label');
  const tab = await currentTab();
  const status = tab == null ? null
    : await chrome.tabs.sendMessage(tab, { type: 'page-status' }).catch(() => null);
  claims.replaceChildren();
  if (!status?.ok) {
    label.hidden = true;
    found.textContent = msg('popup_no_page');
    return;
  }
  label.hidden = false;
  const input = document.getElementById('site-switch');
  input.checked = status.enabled;
  input.dataset.host = status.host;
  document.getElementById('site-name').textContent = msg('popup_site', status.host);
  if (!status.enabled) {
    found.textContent = msg('popup_off');
    return;
  }
  found.textContent = status.count ? msg('popup_found', String(status.count)) : msg('popup_found_none');
  for (const c of status.claims) {
    const item = el('li', null, { 'data-rating': c.rating ?? '' });
    item.append(el('strong', msg(`overlay_rating_${c.rating}`)), document.createTextNode(' '));
    item.append(el('span', c.claim, { class: 'claim' }), document.createTextNode(' '));
    item.append(el('span', msg('popup_claim_posts', String(c.posts)), { class: 'detail' }));
    claims.append(item);
  }
}

document.getElementById('site-switch').addEventListener('change', async (event) => {
  const { host } = event.target.dataset;
  const on = event.target.checked;
  await setSwitches((s) => { s.hosts[host] = on; });
  // The content script redraws when told (setSwitches); give it a moment, then ask again.
  setTimeout(showPage, 150);
});
showPage();
