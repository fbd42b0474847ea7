// factlens background: the one engine of this browser (service worker in Chromium, event
// page in Firefox) and the reader's subscriptions.
//
// The engine is the npm package's own code (web/browser.js, engine.js, dist/), copied to
// engine/ by scripts/package-extension.mjs; config.js is written there too (build-time
// default list and its pinned key). Content scripts send batches of post texts and get
// verdicts back: post text never leaves the browser, and the only network requests made
// here are list and signature downloads (subscriptions.js).
import { createEngine } from './engine/browser.js';
import config from './config.js';
import { Subscriptions } from './subscriptions.js';
import { validateMessage } from './messages.js';

const extensionOrigin = chrome.runtime.getURL('');

// Workers are restarted at any time: everything below is rebuilt from storage, and
// every message handler waits for it.
const ready = (async () => {
  const engine = await createEngine();
  const subscriptions = new Subscriptions({ engine, storage: chrome.storage.local, config,
                                            onChange: broadcastListsChanged });
  await subscriptions.restore();
  return { engine, subscriptions };
})();
ready.catch((error) => console.error('factlens: engine failed to start:', error));

// Every open tab re-checks its posts after a list change, without a reload.
async function broadcastListsChanged() {
  const tabs = await chrome.tabs.query({});
  await Promise.all(tabs.map((tab) =>
    chrome.tabs.sendMessage(tab.id, { type: 'lists-changed' }).catch(() => {})));
}

async function handle(message, sender) {
  const { engine, subscriptions } = await ready;
  switch (message.type) {
    case 'check':
      return { ok: true, verdicts: engine.checkBatch(message.texts, message.context) };
    case 'found':
      if (sender.tab?.id != null) {
        await chrome.action.setBadgeText({ tabId: sender.tab.id,
                                           text: message.count ? String(message.count) : '' });
      }
      return { ok: true };
    case 'status':
      return { ok: true, ...(await subscriptions.status()) };
    case 'subscribe':
      return { ok: true, subscription: await subscriptions.add(message.url, message.publicKey) };
    case 'unsubscribe':
      await subscriptions.remove(message.url);
      return { ok: true };
    case 'update':
      await subscriptions.updateAll({ force: true });
      return { ok: true, ...(await subscriptions.status()) };
    default:
      throw new Error(`unhandled message type ${message.type}`);
  }
}

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  const problem = validateMessage(message, sender, { id: chrome.runtime.id, extensionOrigin });
  if (problem) {
    sendResponse({ ok: false, kind: 'message', message: problem });
    return false;
  }
  handle(message, sender).then(sendResponse, (error) =>
    sendResponse({ ok: false, kind: error.kind ?? 'internal', message: String(error.message) }));
  return true;  // answered asynchronously
});

// Periodic updates: the alarm wakes the worker; each subscription keeps its own
// next-attempt time (exponential back-off after failures, subscriptions.js).
chrome.alarms.create('factlens-update', { periodInMinutes: 30, delayInMinutes: 1 });
chrome.alarms.onAlarm.addListener(async (alarm) => {
  if (alarm.name !== 'factlens-update') return;
  const { subscriptions } = await ready;
  await subscriptions.updateAll({ force: false });
});

chrome.runtime.onInstalled.addListener(async () => {
  const { subscriptions } = await ready;
  await subscriptions.installDefault();
});
