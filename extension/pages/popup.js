// Popup: the subscriptions' state, "update now" and the way to the options page.
import { localise, ask, renderSubscriptions } from './pages.js';

localise();
const list = document.getElementById('subs');
const show = ({ subscriptions }) => renderSubscriptions(list, subscriptions);
document.getElementById('update').addEventListener('click', async () => show(await ask({ type: 'update' })));
document.getElementById('options').addEventListener('click', () => chrome.runtime.openOptionsPage());
ask({ type: 'status' }).then(show);
// Downloads finish in the background: redraw when the stored state changes.
chrome.storage.onChanged.addListener((changes, area) => { if (area === 'local') ask({ type: 'status' }).then(show); });
