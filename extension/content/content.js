// factlens content script: finds posts with the site adapters (adapters.js), sends
// their texts in batches to the background engine, and draws verdicts with the shared
// overlay UI (overlay.js, the npm package's ui/overlay.js). Nothing is built from HTML
// strings; the overlay sets every string with textContent in a closed shadow root.
//
// Pages may throw nodes away (re-render), reuse them for other posts (recycling), or
// remove our overlay: state is kept per post key (adapter.keyOf), verdicts are cached
// per text, and every mutation re-examines the post it touched.
(() => {
  const BATCH = 200;
  const CACHE_MAX = 5000;
  const strings = stringsFromI18n((name) => chrome.i18n.getMessage(name));

  const states = new WeakMap();  // post element -> { overlay, key, text, generation }
  const hostTargets = new WeakMap();  // overlay host -> post element
  const labelled = new Set();  // post elements with an overlay object
  const verdicts = new Map();  // text -> verdict (insertion order: oldest first)
  const revealedKeys = new Set();  // posts the reader chose to see anyway
  const pending = new Set();
  let generation = 0;  // bumped when the lists change: every post is checked again
  let timer = null;
  let running = false;
  let stopped = false;
  let lastCount = -1;

  const allSelectors = FACTLENS_ADAPTERS.map((a) => a.selector).join(', ');

  function schedule() {
    if (!timer && !stopped) timer = setTimeout(flush, 16);
  }

  function queue(element) {
    if (adapterFor(element)) {
      pending.add(element);
      schedule();
    }
  }

  // A change inside a post (recycled node, "see more") re-examines the posts around it.
  function scanUp(node) {
    if (node.nodeType === Node.TEXT_NODE) node = node.parentElement;
    if (!node || node.nodeType !== Node.ELEMENT_NODE) return null;
    for (let el = node.closest(allSelectors); el; el = el.parentElement?.closest(allSelectors)) {
      queue(el);
    }
    return node;
  }

  // Added nodes: the posts around and inside them.
  // A page that clones DOM (some re-renders and virtual lists do) copies our hosts
  // without their shadow roots: empty leftovers, removed here; the copied post gets an
  // overlay of its own.
  const dropCopiedHost = (host) => { if (!hostTargets.has(host)) host.remove(); };
  function scan(node) {
    if (node.nodeType === Node.ELEMENT_NODE && node.hasAttribute(HOST_ATTRIBUTE)) {
      dropCopiedHost(node);
      return;
    }
    const element = scanUp(node);
    if (!element) return;
    for (const host of element.querySelectorAll(`[${HOST_ATTRIBUTE}]`)) dropCopiedHost(host);
    for (const el of element.querySelectorAll(allSelectors)) queue(el);
  }

  async function classify(texts) {
    const unknown = [...new Set(texts.filter((t) => !verdicts.has(t)))];
    for (let i = 0; i < unknown.length; i += BATCH) {
      const chunk = unknown.slice(i, i + BATCH);
      const answer = await chrome.runtime.sendMessage({ type: 'check', texts: chunk });
      if (!answer?.ok) throw new Error(`factlens background: ${answer?.message ?? 'no answer'}`);
      chunk.forEach((text, j) => verdicts.set(text, answer.verdicts[j]));
    }
    while (verdicts.size > CACHE_MAX) verdicts.delete(verdicts.keys().next().value);
  }

  function apply(element, adapter, text, key, verdict) {
    let state = states.get(element);
    if (!state) {
      const overlay = createOverlay(element, {
        strings,
        onReveal: () => {
          const current = states.get(element);
          if (current) revealedKeys.add(current.key);
        },
      });
      hostTargets.set(overlay.host, element);
      state = { overlay };
      states.set(element, state);
      labelled.add(element);
    }
    Object.assign(state, { key, text, generation, shown: verdict.action !== 'none' });
    state.overlay.update(verdict, { text, revealed: revealedKeys.has(key) });
  }

  async function flush() {
    timer = null;
    if (running || stopped) return;
    running = true;
    try {
      for (const element of labelled) {
        if (!element.isConnected) {
          states.get(element)?.overlay.remove();
          states.delete(element);
          labelled.delete(element);
        }
      }
      const work = [];
      for (const element of pending) {
        pending.delete(element);
        if (!element.isConnected) continue;
        const adapter = adapterFor(element);
        if (!adapter) continue;
        const text = adapter.textOf(element);
        const key = adapter.keyOf(element, text);
        const state = states.get(element);
        if (state && state.key === key && state.text === text && state.generation === generation &&
            (!state.shown || state.overlay.host.isConnected)) {
          continue;  // unchanged, and its label (if any) still in place
        }
        work.push({ element, adapter, text, key });
      }
      if (work.length) {
        await classify(work.map((w) => w.text));
        for (const { element, adapter, text, key } of work) {
          if (element.isConnected) apply(element, adapter, text, key, verdicts.get(text));
        }
        let count = 0;
        for (const element of labelled) if (states.get(element).overlay.state !== 'none') count++;
        if (count !== lastCount) {
          lastCount = count;
          chrome.runtime.sendMessage({ type: 'found', count }).catch(() => {});
        }
      }
    } catch (error) {
      if (!chrome.runtime?.id) stop();  // the extension was reloaded or removed
      else console.warn('factlens:', error.message);
    } finally {
      running = false;
    }
    if (pending.size) schedule();
  }

  function stop() {
    stopped = true;
    observer.disconnect();
  }

  const observer = new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === 'childList') {
        for (const node of record.addedNodes) scan(node);
        for (const node of record.removedNodes) {
          // The page threw our overlay away while the post stayed: put it back.
          const target = hostTargets.get(node);
          if (target?.isConnected) {
            pending.add(target);
            schedule();
          }
        }
      }
      scanUp(record.target);
    }
  });
  observer.observe(document.documentElement, {
    childList: true, subtree: true, characterData: true,
    attributes: true, attributeFilter: ['href', 'data-testid', 'role', 'aria-posinset'],
  });
  scan(document.documentElement);

  chrome.runtime.onMessage.addListener((message, sender) => {
    if (sender.id !== chrome.runtime.id || sender.tab) return;  // only the background
    if (message?.type === 'lists-changed') {
      generation++;
      verdicts.clear();
      scan(document.documentElement);
    }
  });
})();
