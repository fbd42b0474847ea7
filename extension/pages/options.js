// Options page: subscriptions (add by URL and pinned public key, remove, update now)
// and their state.
import { localise, ask, renderSubscriptions } from './pages.js';

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
// Downloads finish in the background: redraw when the stored state changes.
chrome.storage.onChanged.addListener((changes, area) => { if (area === 'local') refresh(); });
