// annotate(): labels the posts of any page with an engine's verdicts, using the
// shared overlay UI (ui/overlay.js, the same one the extension uses).
//
// Work happens off the critical path: elements are queued (initial scan and a
// MutationObserver on added nodes) and checked in batches (one checkBatch call into
// wasm each) from requestIdleCallback, or setTimeout where that does not exist.
// State is keyed by the post's key (its text unless keyOf says otherwise), so a post
// the page re-renders keeps one label and the reader's "show anyway".
import { createOverlay, HOST_ATTRIBUTE } from './ui/overlay.js';
import { FactlensError } from './engine.js';

const idle = typeof requestIdleCallback === 'function'
  ? (fn) => { const id = requestIdleCallback(fn, { timeout: 200 }); return () => cancelIdleCallback(id); }
  : (fn) => { const id = setTimeout(fn, 16); return () => clearTimeout(id); };

/**
 * Labels, demotes or hides the elements under `root` that match `selector`, now and
 * as they are added. Returns a handle whose disconnect() stops it.
 * @param {Element | Document | DocumentFragment} root
 * @param {import('./index.js').AnnotateOptions} options  (index.d.ts)
 */
export function annotate(root, options = {}) {
  const { engine, selector } = options;
  if (!root || typeof root.querySelectorAll !== 'function') {
    throw new FactlensError('argument', 'annotate: root must be an Element, Document or ShadowRoot');
  }
  if (!engine || typeof engine.checkBatch !== 'function') {
    throw new FactlensError('argument', 'annotate: options.engine must be an engine from createEngine()');
  }
  if (typeof selector !== 'string' || selector === '') {
    throw new FactlensError('argument', 'annotate: options.selector must be a CSS selector');
  }
  root.querySelector(selector);  // a bad selector throws a SyntaxError here, not later
  const textOf = options.textOf ?? ((element) => element.textContent ?? '');
  const keyOf = options.keyOf ?? ((element, text) => text);
  const batchSize = options.batchSize ?? 50;
  const onError = options.onError ?? ((error) => setTimeout(() => { throw error; }));

  /** @type {WeakMap<Element, { overlay: object, key: string }>} */
  const states = new WeakMap();
  const labelled = new Set();  // elements with an overlay, to clean up when they leave
  const hostTargets = new WeakMap();  // overlay host -> its post
  const revealedKeys = new Set();  // posts the reader chose to see, by key
  const pending = new Set();
  let cancel = null;
  let connected = true;

  const queue = (element) => {
    pending.add(element);
    if (!cancel && connected) cancel = idle(flush);
  };
  const scan = (node) => {
    if (node.nodeType !== 1 || node.hasAttribute(HOST_ATTRIBUTE)) return;
    // An addition inside a known post may have changed its text ("see more").
    const post = node.closest(selector);
    if (post && (root.contains?.(post) ?? true)) queue(post);
    for (const element of node.querySelectorAll(selector)) queue(element);
  };

  function dropLeftovers() {
    for (const element of labelled) {
      if (!element.isConnected) {
        states.get(element)?.overlay.remove();
        states.delete(element);
        labelled.delete(element);
      }
    }
  }

  function flush() {
    cancel?.();  // harmless from inside the idle callback, needed when called directly
    cancel = null;
    if (!connected) return;
    dropLeftovers();
    const batch = [];
    for (const element of pending) {
      pending.delete(element);
      if (!element.isConnected) continue;
      const text = String(textOf(element) ?? '');
      const key = String(keyOf(element, text));
      const state = states.get(element);
      // Unchanged since checked, and its label (if any) still in place: nothing to do.
      if (state && state.key === key && (!state.shown || state.overlay.host.isConnected)) {
        continue;
      }
      batch.push({ element, text, key });
      if (batch.length >= batchSize) break;
    }
    if (batch.length) {
      let verdicts;
      try {
        verdicts = engine.checkBatch(batch.map((b) => b.text), options.context);
      } catch (error) {
        onError(error);
        return false;
      }
      batch.forEach(({ element, text, key }, i) => apply(element, text, key, verdicts[i]));
    }
    if (pending.size && !cancel) cancel = idle(flush);
    return true;
  }

  function apply(element, text, key, verdict) {
    let state = states.get(element);
    let show = true;
    try {
      show = options.onVerdict?.(verdict, element) !== false;
    } catch (error) {
      onError(error);
    }
    if (!state) {
      const overlay = createOverlay(element, {
        strings: options.strings,
        theme: options.theme,
        onReveal: () => revealedKeys.add(states.get(element)?.key),
      });
      hostTargets.set(overlay.host, element);
      state = { overlay, key };
      states.set(element, state);
      labelled.add(element);
    }
    state.key = key;
    state.shown = show && verdict.action !== 'none';
    if (show) state.overlay.update(verdict, { text, revealed: revealedKeys.has(key) });
    else state.overlay.remove();
  }

  const observer = new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) scan(node);
      for (const node of record.removedNodes) {
        // The page threw our label away (a re-render) while the post stayed: put it back.
        const target = hostTargets.get(node);
        if (target?.isConnected) queue(target);
      }
      if (record.removedNodes.length && !cancel) cancel = idle(flush);
    }
  });
  observer.observe(root, { childList: true, subtree: true });
  if (root.nodeType === 1 && root.matches(selector)) queue(root);
  for (const element of root.querySelectorAll(selector)) queue(element);

  return {
    /** Stops observing and drops pending work; `{ removeLabels: true }` also takes the
     *  labels away and gives collapsed posts back their display. */
    disconnect({ removeLabels = false } = {}) {
      connected = false;
      observer.disconnect();
      cancel?.();
      cancel = null;
      pending.clear();
      if (removeLabels) {
        for (const element of labelled) states.get(element)?.overlay.remove();
        labelled.clear();
      }
    },
    /** Checks every matching element again (after loading or unloading a list). */
    refresh() {
      if (!connected) return;
      for (const element of labelled) states.get(element).key = null;
      if (root.nodeType === 1 && root.matches(selector)) queue(root);
      for (const element of root.querySelectorAll(selector)) queue(element);
    },
    /** Runs the queued work now instead of at the next idle moment. */
    flush() {
      while (connected && pending.size && flush());
      cancel?.();
      cancel = null;
    },
  };
}
