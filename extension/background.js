// factlens background: the one engine of this browser (service worker in Chromium, event
// page in Firefox) and the reader's subscriptions.
//
// The engine is the npm package's own code (web/browser.js, engine.js, dist/), copied to
// engine/ by scripts/package-extension.mjs; config.js is written there too (build-time
// default list and its pinned key). Content scripts send batches of post texts and get
// verdicts back: post text never leaves the browser, and the only network requests made
// here are list and signature downloads (subscriptions.js).
//
// Engine faults: if the wasm engine traps or runs out of memory in a batch (FactlensError
// kind "fault": its instance is never called again, web/engine.js), a new engine is
// started, the last good lists are loaded into it from storage, and the batch is tried
// once more. Pages never see an error they could break on: a batch that cannot be
// checked is answered "fault" and the content script leaves the posts as they are. The
// reader sees a quiet status: the popup and options page say the engine was restarted
// (or is failing), and while it is failing the toolbar badge shows "!".
//
// e2e builds only (package-extension.mjs --test-hooks, config.testHooks): the extension's
// own pages may send "test" messages that move this background's clock forward, run the
// periodic update as the alarm would, and exhaust the engine's memory so that its next
// call really runs out of memory. Release builds have no such message type.
import { createEngine } from './engine/browser.js';
import { exhaustMemoryForTests } from './engine/engine.js';
import config from './config.js';
import { Subscriptions } from './subscriptions.js';
import { CompiledCache } from './compiled-cache.js';
import { ListTexts } from './list-texts.js';
import { parsePortMessage, validateMessage } from './messages.js';

const extensionOrigin = chrome.runtime.getURL('');
const testHooks = config.testHooks === true;

// Restarts: at most RESTART_BURST within RESTART_WINDOW; beyond that the engine is left
// off for RESTART_PAUSE (checks answered "fault") rather than restarted in a loop.
const RESTART_BURST = 3;
const RESTART_WINDOW = 60_000;
const RESTART_PAUSE = 5 * 60_000;

// A list loaded from its text takes wasm memory to the load's peak (the text, its
// JSON, the builders), and wasm memory never shrinks: at 100k rules the worker kept
// 114 MB where a restore from the compiled copy takes 47. When list work leaves the
// memory at least this much larger than a fresh engine would need (its initial memory,
// or the bytes in use if more), a fresh engine (a module instance of its own) is
// restored from the copies just written and swapped in, and the old instance's memory
// is collected. A list of 10k rules stays below it (16.8 MB of memory against 16), and
// is not restored twice. e2e builds can lower it (test op "compact-slack").
const COMPACT_SLACK = 16 * 1024 * 1024;

// The clock: real time, moved forward by the e2e tests' hook (kept in storage so a
// restarted worker keeps it).
let clockOffset = 0;
const now = () => Date.now() + clockOffset;

const engineState = { state: 'ok', faults: 0, lastFault: null, restarts: [], pausedUntil: 0 };
let engine = null;
let restarting = null;
let compacting = null;
let compactSlack = COMPACT_SLACK;
let compactions = 0;  // fresh engines swapped in to give memory back (e2e status)
let freshHeapSize = 0;  // a new engine's wasm memory, before any list
// List work (subscribing, updating, unsubscribing, giving memory back) runs one at a
// time: each loads into and unloads from the engine the last one left.
let listQueue = Promise.resolve();

// Workers are restarted at any time: everything below is rebuilt from storage, and
// every message handler waits for it.
const ready = (async () => {
  if (testHooks) clockOffset = (await chrome.storage.local.get('test:clockOffset'))['test:clockOffset'] ?? 0;
  // A new worker has a new engine: an earlier fault is history, not a failing engine.
  const { engineStatus } = await chrome.storage.local.get('engineStatus');
  if (engineStatus?.lastFault) {
    Object.assign(engineState, { state: 'restarted', faults: engineStatus.faults ?? 0,
                                 lastFault: engineStatus.lastFault });
  }
  // Every engine of the worker has an instance of its own, so that one swapped out
  // takes its memory with it.
  engine = await createEngine({ isolated: true });
  freshHeapSize = engine.memoryStats().heapSize;
  if (engineStatus?.state === 'failed') await showEngineState();
  const subscriptions = new Subscriptions({ engine, storage: chrome.storage.local, config, now,
                                            onChange: broadcastListsChanged,
                                            compiled: new CompiledCache(), texts: new ListTexts() });
  await subscriptions.restore();
  return { subscriptions };
})();
ready.catch((error) => console.error('factlens: engine failed to start:', error));
// A start that loaded a list from its text (its compiled copy missing, or written by
// another format version) gives the load's memory back.
ready.then(({ subscriptions }) => listWork(subscriptions, async () => {}), () => {});

// Every open tab re-checks its posts after a list change, without a reload.
async function broadcastListsChanged() {
  const tabs = await chrome.tabs.query({});
  await Promise.all(tabs.map((tab) =>
    chrome.tabs.sendMessage(tab.id, { type: 'lists-changed' }).catch(() => {})));
}

async function showEngineState() {
  const failing = engineState.state === 'failed';
  await chrome.storage.local.set({ engineStatus: { state: engineState.state, faults: engineState.faults,
                                                   lastFault: engineState.lastFault } });
  await chrome.action.setBadgeText({ text: failing ? '!' : '' });
  await chrome.action.setTitle({ title: failing
    ? chrome.i18n.getMessage('engine_failed_title') : chrome.i18n.getMessage('extName') });
}

function noteFault(error) {
  engineState.faults++;
  engineState.lastFault = { message: String(error.message), at: now() };
}

const faultError = (message) => Object.assign(new Error(message), { kind: 'fault' });

// What a worker start does: a new engine with the last good lists restored into it,
// then swapped in for the old one, which is disposed (a trapped one frees nothing).
// Checks go on in the old one meanwhile. If the restore throws, the old one stays.
async function replaceEngine(subscriptions) {
  const fresh = await createEngine({ isolated: true });
  try {
    await subscriptions.attach(fresh);
  } catch (error) {
    fresh.dispose();
    throw error;
  }
  const old = engine;
  engine = fresh;
  old?.dispose();
}

// Swaps in a fresh engine when that would give back at least compactSlack of memory
// (see COMPACT_SLACK). A fault there is the engine's: restarted as for a check.
async function compactEngine(subscriptions) {
  if (restarting || engineState.state === 'failed') return;
  let excess;
  try {
    const { heapSize, bytesInUse } = engine.memoryStats();
    excess = heapSize - Math.max(freshHeapSize, bytesInUse);
  } catch {
    return;  // a trapped engine: the next check restarts it
  }
  if (excess < compactSlack) return;
  compacting = replaceEngine(subscriptions);
  try {
    await compacting;
    compactions++;
  } catch (error) {
    if (error.kind !== 'fault') throw error;
    noteFault(error);
    await restartEngine(subscriptions);
  } finally {
    compacting = null;
  }
}

// Runs list work after the list work before it (withEngine: a fault restarts the
// engine), then gives back the memory it left unused. The answer does not wait for
// that; the next list work does.
function listWork(subscriptions, work) {
  const run = listQueue.then(() => withEngine(subscriptions, work));
  listQueue = run.catch(() => {}).then(() => compactEngine(subscriptions))
    .catch((error) => console.error('factlens: memory not given back:', error));
  return run;
}

// Starts a new engine with the last good lists (one restart at a time); does nothing
// while paused.
function restartEngine(subscriptions) {
  restarting ??= (async () => {
    await compacting?.catch(() => {});  // one replacement at a time
    const t = now();
    if (engineState.state === 'failed' && t < engineState.pausedUntil) return;
    engineState.restarts = [...engineState.restarts.filter((at) => t - at < RESTART_WINDOW), t];
    if (engineState.restarts.length > RESTART_BURST) {
      engineState.state = 'failed';
      engineState.pausedUntil = t + RESTART_PAUSE;
      engineState.restarts = [];
      await showEngineState();
      return;
    }
    try {
      await replaceEngine(subscriptions);
      engineState.state = 'restarted';
    } catch (error) {
      engineState.state = 'failed';
      engineState.pausedUntil = t + RESTART_PAUSE;
      engineState.lastFault = { message: String(error.message), at: t };
    }
    await showEngineState();
    // Batches that failed are checked again by every page.
    if (engineState.state === 'restarted') await broadcastListsChanged();
  })().finally(() => { restarting = null; });
  return restarting;
}

async function checkBatch(texts, context, subscriptions) {
  for (let attempt = 0; ; attempt++) {
    if (restarting) await restarting;
    if (engineState.state === 'failed') {
      if (now() < engineState.pausedUntil) throw faultError('the engine is failing; checks are paused');
      await restartEngine(subscriptions);
      if (engineState.state === 'failed') throw faultError('the engine could not be restarted');
    }
    try {
      return engine.checkBatch(texts, context);
    } catch (error) {
      if (error.kind !== 'fault' && !(error instanceof WebAssembly.RuntimeError)) throw error;
      noteFault(error);
      if (attempt >= 1) {
        // A new engine failed on this batch too: pause rather than restart in a loop.
        engineState.state = 'failed';
        engineState.pausedUntil = now() + RESTART_PAUSE;
        await showEngineState();
        throw faultError('the engine failed twice on this batch');
      }
      await restartEngine(subscriptions);
    }
  }
}

// Runs `work` (list downloads and loads); an engine fault there restarts the engine and
// runs it once more, unless the engine is paused.
async function withEngine(subscriptions, work) {
  try {
    return await work();
  } catch (error) {
    if (error.kind !== 'fault') throw error;
    noteFault(error);
    await restartEngine(subscriptions);
    if (engineState.state === 'failed') throw error;
    return work();
  }
}

// The subscriptions' state comes from storage (subscriptions.js), so it is there even
// while the engine is down.
async function status(subscriptions) {
  const { subscriptions: subs } = await subscriptions.status();
  return { subscriptions: subs, now: now(),
           engine: { state: engineState.state, faults: engineState.faults,
                     lastFault: engineState.lastFault, restored: subscriptions.restored() } };
}

async function handleTest(message, subscriptions) {
  switch (message.op) {
    case 'advance-clock':
      clockOffset += message.ms;
      await chrome.storage.local.set({ 'test:clockOffset': clockOffset });
      return { ok: true, now: now() };
    case 'alarm':
      await listWork(subscriptions, () => subscriptions.updateAll({ force: false }));
      return { ok: true, ...(await status(subscriptions)) };
    case 'compact-slack':
      compactSlack = message.bytes;
      return { ok: true };
    case 'memory':
      await listQueue;  // after the list work under way, and its swap
      return { ok: true, memory: engine.memoryStats(), compactions };
    case 'restart-engine':
      await replaceEngine(subscriptions);
      return { ok: true, ...(await status(subscriptions)) };
    case 'exhaust-memory':
      return { ok: true, taken: exhaustMemoryForTests(engine) };
    default:
      throw new Error(`unknown test op ${message.op}`);
  }
}

async function handle(message, sender) {
  const { subscriptions } = await ready;
  switch (message.type) {
    case 'check': {
      const verdicts = await checkBatch(message.texts, message.context, subscriptions);
      // Most posts match nothing: null stands for that, which keeps the answer the
      // page's main thread must deserialise small.
      return { ok: true,
               verdicts: verdicts.map((v) => (v.action === 'none' && !v.matches?.length ? null : v)) };
    }
    case 'found':
      if (sender.tab?.id != null) {
        await chrome.action.setBadgeText({ tabId: sender.tab.id,
                                           text: message.count ? String(message.count) : '' });
      }
      return { ok: true };
    case 'status':
      return { ok: true, ...(await status(subscriptions)) };
    case 'subscribe':
      return { ok: true, subscription: await listWork(subscriptions,
        () => subscriptions.add(message.url, message.publicKey)) };
    case 'unsubscribe':
      await listWork(subscriptions, () => subscriptions.remove(message.url));
      return { ok: true };
    case 'update':
      await listWork(subscriptions, () => subscriptions.updateAll({ force: true }));
      return { ok: true, ...(await status(subscriptions)) };
    case 'test':
      return handleTest(message, subscriptions);
    default:
      throw new Error(`unhandled message type ${message.type}`);
  }
}

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  const problem = validateMessage(message, sender, { id: chrome.runtime.id, extensionOrigin, testHooks });
  if (problem) {
    sendResponse({ ok: false, kind: 'message', message: problem });
    return false;
  }
  handle(message, sender).then(sendResponse, (error) =>
    sendResponse({ ok: false, kind: error.kind ?? 'internal', message: String(error.message) }));
  return true;  // answered asynchronously
});

// Checks from content scripts over their long-lived port (content.js): the same
// validation and answers as runtime messages, each answer tagged with the asker's id.
chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== 'check') {
    port.disconnect();
    return;
  }
  const reply = (id, answer) => {
    try {
      port.postMessage({ id, ...answer });
    } catch { /* the tab went away */ }
  };
  port.onMessage.addListener((envelope) => {
    const id = envelope?.id;
    if (!Number.isSafeInteger(id)) return;
    let message;
    try {
      message = parsePortMessage(envelope.json);
    } catch (error) {
      reply(id, { ok: false, kind: 'message', message: error.message });
      return;
    }
    const problem = (message?.type === 'check' ? null : 'only checks go over the port') ??
      validateMessage(message, port.sender, { id: chrome.runtime.id, extensionOrigin, testHooks });
    if (problem) {
      reply(id, { ok: false, kind: 'message', message: problem });
      return;
    }
    handle(message, port.sender).then((answer) => reply(id, answer), (error) =>
      reply(id, { ok: false, kind: error.kind ?? 'internal', message: String(error.message) }));
  });
});

// Periodic updates: the alarm wakes the worker; each subscription keeps its own
// next-attempt time (exponential back-off after failures, subscriptions.js). e2e builds
// run it only through the "alarm" hook, so that their clock is the test's alone.
// Created only where it is missing (a new install, a browser that dropped it): created
// again at every worker start, it was pushed back each time, and a worker started
// more often than its first delay never saw it fire.
if (!testHooks) {
  chrome.alarms.get('factlens-update').then((alarm) => alarm ??
    chrome.alarms.create('factlens-update', { periodInMinutes: 30, delayInMinutes: 1 }))
    .catch((error) => console.error('factlens: update alarm:', error));
}
chrome.alarms.onAlarm.addListener(async (alarm) => {
  if (alarm.name !== 'factlens-update') return;
  const { subscriptions } = await ready;
  await listWork(subscriptions, () => subscriptions.updateAll({ force: false }));
});

chrome.runtime.onInstalled.addListener(async () => {
  const { subscriptions } = await ready;
  await listWork(subscriptions, () => subscriptions.installDefault());
});
