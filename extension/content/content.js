// factlens content script: finds posts with the site adapters (adapters.js), sends
// their texts in batches to the background engine, and draws verdicts with the shared
// overlay UI (overlay.js, the npm package's ui/overlay.js). Nothing is built from HTML
// strings; the overlay sets every string with textContent in a closed shadow root.
//
// Pages may throw nodes away (re-render), reuse them for other posts (recycling), or
// remove our overlay: state is kept per post key (adapter.read().key), verdicts are
// cached per text, and every mutation re-examines the post it touched. A post's key
// keeps every text it was shown with (truncated then expanded, original then
// translated) and the strongest verdict among them wins.
//
// Nothing is removed from the page: a demoted or hidden post gets an inline
// display:none (an attribute change, which React-owned nodes survive) and the overlay
// is a sibling before it. A demoted post is moved below the undemoted posts of its
// container only where its adapter says that is safe (adapter.reorder: old Reddit),
// and moved back when it is shown anyway, no longer demoted, or factlens is switched
// off; everywhere else it stays where the site put it. The reader's settings live in
// chrome.storage.local: `siteSwitches` (per site and per host on/off) and
// `dismissedPosts` ("not this post", hashed post keys); neither ever leaves the
// browser. A "not this post" in one tab reaches the other open tabs when they next
// read the settings (reload or a change made in the options page or popup).
(() => {
  const BATCH = 200;
  const CACHE_MAX = 5000;
  const KEY_TEXTS = 4;  // texts remembered per post key
  const DISMISSED_MAX = 5000;
  const REPORT_MS = 1000;
  const SITE_RECHECK_MS = 2000;
  const NONE = Object.freeze({ action: 'none', rating: null, severity: null, score: 0,
                               stance: 'unclear', matches: [] });
  const RANK = { none: 0, label: 1, demote: 2, hide: 3 };
  const strings = stringsFromI18n((name) => chrome.i18n.getMessage(name));

  // post element -> { key, text, texts, read, verdict, generation, overlay|null }
  const states = new WeakMap();
  const hostTargets = new WeakMap();  // overlay host -> post element
  const tracked = new Set();  // post elements with a state
  const verdicts = new Map();  // text -> verdict (insertion order: oldest first)
  const keyTexts = new Map();  // post key -> texts seen for it (oldest first)
  const revealedKeys = new Set();  // posts the reader chose to see anyway
  // Demoted posts moved below the others: post -> { anchor, trailing }; the anchor is a
  // comment node left at the post's place, so it goes back exactly there.
  const moved = new Map();
  const unsettled = new Set();  // containers whose demoted posts are to be put below
  const focusHeld = new Set();  // containers where a move waits for the focus to leave
  let settling = false;
  let dismissed = new Set();  // hashText(key) of posts marked "not this post"
  let switches = { sites: {}, hosts: {} };
  let enabled = false;
  const pending = new Set();
  let generation = 0;  // bumped when the lists change: every post is checked again
  let timer = null;
  let running = false;
  let stopped = false;
  let lastCount = -1;
  let changed = true;  // something that counts for the badge changed since the last report
  let page = adaptersForSite(pageSite());
  let siteCheckedAt = performance.now();

  const isEnabled = () =>
    switches.hosts?.[location.hostname] ?? switches.sites?.[page.site] ?? true;

  function schedule() {
    if (!timer && !stopped) timer = setTimeout(flush, 16);
  }

  function queue(element) {
    if (page.adapterFor(element)) {
      pending.add(element);
      schedule();
    }
  }

  // A change inside a post (recycled node, "see more", a translation) re-examines the
  // posts around it.
  function scanUp(node) {
    if (node.nodeType === Node.TEXT_NODE) node = node.parentElement;
    if (!node || node.nodeType !== Node.ELEMENT_NODE) return null;
    const selector = page.selector;
    for (let el = node.closest(selector); el; el = el.parentElement?.closest(selector)) {
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
    for (const el of element.querySelectorAll(page.selector)) queue(el);
  }

  // Checks go over one long-lived port: runtime.sendMessage opens and closes a channel
  // per call, which costs the page's main thread about 1.6 ms each time; a port pays
  // that once. When the background's worker stops, the port disconnects: the call in
  // flight is asked again by sendMessage (which wakes the worker) and the next one
  // opens a new port.
  let checkPort = null;
  let nextAsk = 1;
  const asked = new Map();  // id -> resolve
  function openPort() {
    const port = chrome.runtime.connect({ name: 'check' });
    port.onMessage.addListener((answer) => {
      const resolve = asked.get(answer?.id);
      if (!resolve) return;
      asked.delete(answer.id);
      resolve(answer);
    });
    port.onDisconnect.addListener(() => {
      if (checkPort === port) checkPort = null;
      for (const resolve of asked.values()) resolve(null);
      asked.clear();
    });
    return port;
  }
  async function askCheck(texts) {
    const answer = await new Promise((resolve) => {
      const id = nextAsk++;
      asked.set(id, resolve);
      try {
        checkPort ??= openPort();
        // One JSON string, not the object: Chromium's messaging serialises an array of
        // strings several times slower than a single string of the same size, on the
        // page's main thread.
        checkPort.postMessage({ id, json: JSON.stringify({ type: 'check', texts }) });
      } catch {
        asked.delete(id);
        checkPort = null;
        resolve(null);
      }
    });
    return answer ?? chrome.runtime.sendMessage({ type: 'check', texts });
  }

  // Returns false if the lists changed while the texts were out (a list update, or the
  // background restarting its engine): the verdicts are dropped, and every post, queued
  // again by the change, is checked by the next flush.
  async function classify(texts) {
    const asked = generation;
    const unknown = [...new Set(texts.filter((t) => !verdicts.has(t)))];
    for (let i = 0; i < unknown.length; i += BATCH) {
      const chunk = unknown.slice(i, i + BATCH);
      const answer = await askCheck(chunk);
      if (!answer?.ok) throw new Error(`factlens background: ${answer?.message ?? 'no answer'}`);
      if (generation !== asked) return false;
      chunk.forEach((text, j) => verdicts.set(text, answer.verdicts[j] ?? NONE));  // null: none
    }
    while (verdicts.size > CACHE_MAX) verdicts.delete(verdicts.keys().next().value);
    return true;
  }

  // The texts to check for `key`: those seen before plus `text` (most recent last).
  function textsFor(key, text) {
    const seen = keyTexts.get(key) ?? [];
    const texts = [...seen.filter((t) => t !== text), text].slice(-KEY_TEXTS);
    keyTexts.delete(key);  // re-insert: recently used last
    keyTexts.set(key, texts);
    while (keyTexts.size > CACHE_MAX) keyTexts.delete(keyTexts.keys().next().value);
    return texts;
  }

  // The strongest verdict among `texts`, and the text it came from ("why?" quotes it).
  function strongest(texts) {
    let best = { verdict: NONE, text: texts[texts.length - 1] };
    for (const text of texts) {
      const v = verdicts.get(text) ?? NONE;
      const a = RANK[v.action] ?? 0;
      const b = RANK[best.verdict.action] ?? 0;
      if (a > b || (a === b && a > 0 && v.score > best.verdict.score)) best = { verdict: v, text };
    }
    return best;
  }

  // Overlays go before the post; a post slotted into a shadow host (new Reddit's
  // nested comments) must have its overlay in the same slot or it is not rendered.
  function place(host, target) {
    const slot = target.getAttribute('slot');
    if (slot) host.setAttribute('slot', slot);
    else host.removeAttribute('slot');
    target.before(host);
  }

  const shows = (state) =>
    enabled && state.verdict.action !== 'none' && !dismissed.has(state.hash);

  // The nodes that move together: our overlay (just before the post), the post, and
  // the site's own separators the adapter names as belonging to it.
  function unitNodes(element, trailing) {
    const host = states.get(element)?.overlay?.host;
    const nodes = host?.isConnected && host.nextElementSibling === element ? [host, element] : [element];
    for (const node of trailing) if (node.parentNode === element.parentNode) nodes.push(node);
    return nodes;
  }

  // Element.moveBefore (Debian's Chromium 156 and Firefox ESR 153 have it) keeps the
  // state of what it moves (focus, iframes, transitions); where it is missing or
  // refuses, insertBefore.
  function moveNodes(nodes, parent, before) {
    for (const node of nodes) {
      if (typeof parent.moveBefore === 'function') {
        try {
          parent.moveBefore(node, before);
          continue;
        } catch {
          // fall through
        }
      }
      parent.insertBefore(node, before);
    }
  }

  const holdsFocus = (nodes) => {
    const active = document.activeElement;
    return Boolean(active) && active !== document.body && nodes.some((n) => n.contains(active));
  };

  // The node after `node` that counts for order: not an anchor or white space.
  function nextInOrder(node) {
    let next = node.nextSibling;
    while (next && (next.nodeType === Node.COMMENT_NODE ||
                    (next.nodeType === Node.TEXT_NODE && !next.data.trim()))) {
      next = next.nextSibling;
    }
    return next;
  }

  // Where a post was in the site's order: its anchor if it was moved, else itself.
  const placeOf = (element) => moved.get(element)?.anchor ?? element;
  const byPlace = (a, b) =>
    (placeOf(a.element).compareDocumentPosition(placeOf(b.element)) &
     Node.DOCUMENT_POSITION_FOLLOWING) ? -1 : 1;

  // Puts the demoted posts of each unsettled container after its last undemoted post,
  // in the site's order (of their anchors: a post that joins the moved ones later,
  // say one held by the focus, goes where its place says, not last); never across
  // containers. A post holding the keyboard focus is not moved from under the
  // reader: it waits until the focus leaves it.
  function settle() {
    settling = false;
    for (const container of unsettled) {
      unsettled.delete(container);
      if (!enabled || !container.isConnected) continue;
      const units = [];
      for (const child of container.children) {
        const state = states.get(child);
        const reorder = (state?.adapter ?? page.adapterFor(child))?.reorder?.(child);
        if (reorder?.container !== container) continue;
        units.push({ element: child, trailing: reorder.trailing,
                     demoted: state?.overlay?.state === 'demoted' });
      }
      let last = -1;
      units.forEach((unit, i) => { if (!unit.demoted) last = i; });
      if (last <= 0) continue;
      // Every demoted post goes below, in the site's order; one out of place that
      // holds the focus stays where it is for now.
      const below = units.filter((unit) => unit.demoted).sort(byPlace);
      let end = unitNodes(units[last].element, units[last].trailing).at(-1);
      for (const unit of below) {
        const nodes = unitNodes(unit.element, unit.trailing);
        if (nextInOrder(end) !== nodes[0]) {  // moved only when out of place
          if (holdsFocus(nodes)) {
            focusHeld.add(container);
            continue;
          }
          if (!moved.has(unit.element)) {
            const anchor = document.createComment('factlens: a demoted post was here');
            nodes[0].before(anchor);
            moved.set(unit.element, { anchor, trailing: unit.trailing });
          }
          moveNodes(nodes, container, end.nextSibling);
        }
        end = nodes.at(-1);
      }
    }
  }

  function unsettle(container) {
    unsettled.add(container);
    if (!settling) {
      settling = true;
      queueMicrotask(settle);  // once, after every post drawn in this task
    }
  }

  // A moved post goes back to its anchor (if both are still in the same container).
  function restore(element) {
    const move = moved.get(element);
    if (!move) return;
    moved.delete(element);
    const { anchor } = move;
    if (anchor.isConnected && element.parentNode === anchor.parentNode) {
      moveNodes(unitNodes(element, move.trailing), anchor.parentNode, anchor);
    }
    anchor.remove();
  }

  // After a post is drawn: back in place unless it is demoted, and its container put in
  // order (a new undemoted post, say, appended below the moved ones).
  function arrange(element) {
    const state = states.get(element);
    const reorder = state?.adapter?.reorder;
    if (!reorder) return;
    if (!enabled || state.overlay?.state !== 'demoted') restore(element);
    const container = reorder(element)?.container;
    if (container) unsettle(container);
  }

  document.addEventListener('focusout', () => {
    if (!focusHeld.size) return;
    setTimeout(() => {  // once the focus has landed elsewhere
      for (const container of focusHeld) unsettle(container);
      focusHeld.clear();
    }, 0);
  }, true);

  function draw(element) {
    const state = states.get(element);
    const show = shows(state);
    if (show && !state.overlay) {
      const overlay = createOverlay(element, {
        strings,
        place,
        onReveal: () => {
          const current = states.get(element);
          if (current) revealedKeys.add(current.key);
          // Synchronously: the overlay focuses its label after this returns, in its
          // place again.
          arrange(element);
        },
        onDismiss: () => {
          const current = states.get(element);
          if (current) dismiss(current.key);
        },
      });
      hostTargets.set(overlay.host, element);
      state.overlay = overlay;
    }
    if (state.overlay) {
      state.overlay.update(show ? state.verdict : NONE,
                           { text: state.text, revealed: revealedKeys.has(state.key) });
    }
    arrange(element);
  }

  function apply(element, read, texts, adapter) {
    let state = states.get(element);
    if (!state) {
      state = { overlay: null };
      states.set(element, state);
      tracked.add(element);
    }
    const { verdict, text } = strongest(texts);
    if (state.key !== read.key) state.hash = hashText(read.key);
    Object.assign(state, { key: read.key, read, text, texts, verdict, generation, adapter });
    draw(element);
  }

  function forget(element) {
    states.get(element)?.overlay?.remove();
    restore(element);
    states.delete(element);
    tracked.delete(element);
  }

  // What this page shows: matched posts (not dismissed) and their claims.
  function found() {
    const claims = new Map();
    let count = 0;
    if (!enabled) return { count, claims: [] };
    for (const element of tracked) {
      const state = states.get(element);
      if (state.verdict.action === 'none' || dismissed.has(state.hash)) continue;
      count++;
      const top = state.verdict.matches[0];
      const id = `${top.listId}\n${top.ruleId}`;
      const entry = claims.get(id) ?? { claim: top.claim, rating: state.verdict.rating,
                                        publisher: top.review?.publisher ?? '',
                                        review: isHttpsUrl(top.review?.url) ? top.review.url : null,
                                        posts: 0 };
      entry.posts++;
      claims.set(id, entry);
    }
    return { count, claims: [...claims.values()] };
  }

  // The badge count, sent at most every REPORT_MS: each message costs the page's main
  // thread about a millisecond, and a feed labels posts in quick bursts.
  let reportTimer = null;
  function report() {
    if (reportTimer) return;
    reportTimer = setTimeout(() => {
      reportTimer = null;
      const { count } = found();
      if (count !== lastCount) {
        lastCount = count;
        chrome.runtime.sendMessage({ type: 'found', count }).catch(() => {});
      }
    }, REPORT_MS);
  }

  async function flush() {
    timer = null;
    if (running || stopped) return;
    running = true;
    try {
      await settingsLoaded;
      // A page known by its markup (a Mastodon app that mounts after load) is looked for
      // again now and then; a query over the whole page per flush would cost too much.
      const now = performance.now();
      const site = page.site === 'generic' && now - siteCheckedAt > SITE_RECHECK_MS
        ? pageSite() : page.site;
      if (page.site === 'generic' && site === 'generic') siteCheckedAt = now;
      if (site !== page.site) {
        page = adaptersForSite(site);
        enabled = isEnabled();
        for (const element of tracked) forget(element);
        scan(document.documentElement);
      }
      for (const element of tracked) {
        if (!element.isConnected) {
          forget(element);
          changed = true;
        }
      }
      if (!enabled) {
        pending.clear();
        report();
        return;
      }
      const work = [];
      for (const element of pending) {
        pending.delete(element);
        if (!element.isConnected) continue;
        const adapter = page.adapterFor(element);
        if (!adapter) {
          if (states.has(element)) forget(element);
          continue;
        }
        const read = adapter.read(element);
        const state = states.get(element);
        if (state && state.key === read.key && state.texts.includes(read.text) &&
            state.generation === generation &&
            (!shows(state) || state.overlay?.state !== 'none')) {
          continue;  // unchanged, and its label (if any) still in place
        }
        if (!read.text) {
          if (state) forget(element);
          continue;
        }
        // A node recycled for another post drops the old post's label now: if the check
        // fails or is slow, that label must not stand on someone else's post meanwhile.
        if (state && state.key !== read.key) forget(element);
        work.push({ element, read, adapter, texts: textsFor(read.key, read.text) });
      }
      if (work.length) {
        if (await classify(work.flatMap((w) => w.texts))) {
          for (const { element, read, texts, adapter } of work) {
            if (element.isConnected) apply(element, read, texts, adapter);
          }
          changed = true;
        }
      }
      if (changed) report();
      changed = false;
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

  async function dismiss(key) {
    const hash = hashText(key);
    dismissed.add(hash);
    for (const element of tracked) if (states.get(element).key === key) draw(element);
    changed = true;
    report();
    const { dismissedPosts } = await chrome.storage.local.get('dismissedPosts');
    const all = { ...(dismissedPosts ?? {}), [hash]: Date.now() };
    const keys = Object.keys(all);
    if (keys.length > DISMISSED_MAX) {
      keys.sort((a, b) => all[a] - all[b]);
      for (const old of keys.slice(0, keys.length - DISMISSED_MAX)) delete all[old];
    }
    await chrome.storage.local.set({ dismissedPosts: all });
  }

  function useSettings({ siteSwitches, dismissedPosts }) {
    if (siteSwitches !== undefined) {
      switches = siteSwitches && typeof siteSwitches === 'object' ? siteSwitches : {};
    }
    if (dismissedPosts !== undefined) {
      dismissed = new Set(Object.keys(dismissedPosts && typeof dismissedPosts === 'object'
        ? dismissedPosts : {}));
    }
    const was = enabled;
    enabled = isEnabled();
    changed = true;
    for (const element of tracked) draw(element);
    if (enabled && !was) scan(document.documentElement);
    schedule();
  }

  // Read at start and again when the options page or popup says they changed
  // ('settings-changed'). No storage.onChanged listener here: it would copy every
  // stored change, megabytes of list data on each list update, into every tab.
  const readSettings = () => chrome.storage.local.get(['siteSwitches', 'dismissedPosts'])
    .then((stored) => useSettings({ siteSwitches: stored.siteSwitches ?? null,
                                    dismissedPosts: stored.dismissedPosts ?? null }),
          (error) => console.warn('factlens: settings:', error.message));
  const settingsLoaded = readSettings();

  // Our own overlays coming and going change nothing a post says: not re-read for that.
  const ours = (nodes) => {
    for (const node of nodes) if (!hostTargets.has(node)) return false;
    return true;
  };
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
        if (ours(record.addedNodes) && ours(record.removedNodes)) continue;
      }
      scanUp(record.target);
    }
  });
  observer.observe(document.documentElement, {
    childList: true, subtree: true, characterData: true,
    attributes: true,
    attributeFilter: ['href', 'data-testid', 'role', 'aria-posinset', 'data-id', 'data-urn',
                      'componentkey', 'thingid', 'permalink', 'post-title', 'data-fullname'],
  });
  scan(document.documentElement);

  chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
    // Only the extension's own contexts (background, popup, options) reach here.
    const extensionUrl = chrome.runtime.getURL('');
    if (sender.id !== chrome.runtime.id || (sender.url && !sender.url.startsWith(extensionUrl))) {
      return false;
    }
    if (message?.type === 'lists-changed') {
      generation++;
      verdicts.clear();
      scan(document.documentElement);
    } else if (message?.type === 'settings-changed') {
      readSettings();
    } else if (message?.type === 'page-status') {
      // The popup's "found on this page": counts and claims, nothing of the posts' text.
      sendResponse({ ok: true, site: page.site, host: location.hostname, enabled, ...found() });
    }
    return false;
  });
})();
