// Options page: subscriptions (add by URL and pinned public key, remove, update now)
// and their state.
import { localise, ask, renderSubscriptions, SITES, getSwitches, setSwitches, settingsChanged, msg, el }
  from './pages.js';

localise();
const list = document.getElementById('subs');
const addError = document.getElementById('add-error');

async function refresh(status) {
  const { subscriptions } = status ?? await ask({ type: 'status' });
  renderSubscriptions(list, subscriptions, {
    onRemove: async (url) => { await ask({ type: 'unsubscribe', url }); await refresh(); },
  });
}

document.getElementById('add').addEventListener('submit', async (event) => {
  event.preventDefault();
  addError.textContent = '';
  const url = document.getElementById('url').value.trim();
  const origin = (() => { try { return `${new URL(url).origin}/*`; } catch { return null; } })();
  try {
    // Downloads need a host permission for the list's origin; asked for here, in the
    // click that expresses the reader's intent.
    if (origin?.startsWith('https://') &&
        !(await chrome.permissions.request({ origins: [origin] }))) {
      throw new Error(chrome.i18n.getMessage('options_permission_denied'));
    }
    await ask({ type: 'subscribe', url, publicKey: document.getElementById('key').value });
  } catch (error) {
    addError.textContent = error.message;
  }
  await refresh();
});

document.getElementById('update').addEventListener('click', async () => refresh(await ask({ type: 'update' })));
refresh();

// Per-site switches (content scripts read them from storage and follow changes), the
// per-host overrides the popup sets, and the "not this post" exceptions.
async function refreshSites() {
  const switches = await getSwitches();
  const box = document.getElementById('sites');
  box.replaceChildren();
  for (const site of SITES) {
    const id = `site-${site}`;
    const input = el('input', null, { type: 'checkbox', id, 'data-site': site });
    input.checked = switches.sites[site] !== false;
    input.addEventListener('change', () =>
      setSwitches((s) => { s.sites[site] = input.checked; }));
    const label = el('label', msg(`site_${site}`), { for: id });
    label.prepend(input);
    box.append(label);
  }
  const hosts = document.getElementById('hosts');
  hosts.replaceChildren();
  for (const [host, on] of Object.entries(switches.hosts).sort()) {
    const item = el('li', `${host}: ${msg(on ? 'options_host_on' : 'options_host_off')} `,
                    { 'data-host': host });
    const reset = el('button', msg('options_host_reset'), { type: 'button' });
    reset.addEventListener('click', () => setSwitches((s) => { delete s.hosts[host]; }));
    item.append(reset);
    hosts.append(item);
  }
  const { dismissedPosts } = await chrome.storage.local.get('dismissedPosts');
  const count = Object.keys(dismissedPosts && typeof dismissedPosts === 'object' ? dismissedPosts : {}).length;
  document.getElementById('dismissed').textContent = msg('options_dismissed', String(count));
  document.getElementById('dismissed-clear').disabled = count === 0;
}
document.getElementById('dismissed-clear').addEventListener('click', async () => {
  await chrome.storage.local.remove('dismissedPosts');
  await settingsChanged();
});
refreshSites();

// Downloads finish in the background: redraw when the stored state changes.
chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local') return;
  if (changes.siteSwitches || changes.dismissedPosts) refreshSites();
  else refresh();
});
