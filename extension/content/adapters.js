// Site adapters (classic content script; shares the isolated world's globals with
// overlay.js and content.js). Each adapter says which elements are posts, what their
// text is, and which key identifies the post across re-renders and recycled nodes.
// Selectors: ../shared/notes/sites.md. Adapters run in order; an element claimed by an
// earlier adapter (or inside or around one) is left alone by the later ones.

const MAX_TEXT_CHARS = 100_000;  // messages.js LIMITS.textChars

const squash = (text) => text.replace(/\s+/g, ' ').trim().slice(0, MAX_TEXT_CHARS);

// X (x.com, twitter.com): cells are virtualised and recycled, so state is keyed by the
// status id of the permalink that wraps the post's time, never by node.
const X_ADAPTER = Object.freeze({
  name: 'x',
  selector: 'article[data-testid="tweet"]',
  textOf(post) {
    // The first tweetText is the post's own; a second one belongs to a quoted post.
    return squash(post.querySelector('[data-testid="tweetText"]')?.textContent ?? '');
  },
  keyOf(post, text) {
    const link = post.querySelector('time')?.closest('a[href*="/status/"]');
    const id = link?.getAttribute('href')?.match(/\/status\/(\d{1,25})(?:[/?#]|$)/)?.[1];
    return id ? `x:${id}` : `x-text:${text}`;
  },
});

// Every other page: the ARIA and HTML shapes feeds use. The innermost candidate is the
// post (a feed item wrapping an article is labelled once, at the article).
const GENERIC_SELECTOR = 'article, [role="article"], [role="feed"] > *, [aria-posinset]';
const GENERIC_ADAPTER = Object.freeze({
  name: 'generic',
  selector: GENERIC_SELECTOR,
  accepts(element) {
    if (element.hasAttribute(HOST_ATTRIBUTE)) return false;
    if (element.querySelector(`${GENERIC_SELECTOR}, ${X_ADAPTER.selector}`)) return false;
    return !element.closest(X_ADAPTER.selector);
  },
  textOf(post) {
    return squash(post.textContent ?? '');
  },
  keyOf(post, text) {
    return `text:${text}`;
  },
});

const FACTLENS_ADAPTERS = Object.freeze([X_ADAPTER, GENERIC_ADAPTER]);

/** Returns the adapter that owns `element` as a post, or null. */
function adapterFor(element) {
  for (const adapter of FACTLENS_ADAPTERS) {
    if (element.matches(adapter.selector) && (adapter.accepts?.(element) ?? true)) return adapter;
  }
  return null;
}
