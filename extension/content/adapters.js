// Site adapters (classic content script; shares the isolated world's globals with
// overlay.js and content.js). Each adapter says which elements are posts, what their
// text is, and which key identifies the post across re-renders and recycled nodes.
// Selectors: ../shared/notes/sites.md. Adapters run in order; an element claimed by an
// earlier adapter (or inside or around one) is left alone by the later ones.

const MAX_TEXT_CHARS = 100_000;  // messages.js LIMITS.textChars

const squash = (text) => text.replace(/\s+/g, ' ').trim().slice(0, MAX_TEXT_CHARS);

// Elements whose boundaries separate words (textContent would glue "<h2>Energy</h2>
// <p>Wind" into "EnergyWind"); decided by tag, since computed styles cost layout work.
const BREAKS = new Set(['ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BR', 'DD', 'DIV', 'DL',
  'DT', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HR',
  'LI', 'MAIN', 'NAV', 'OL', 'P', 'PRE', 'SECTION', 'TABLE', 'TD', 'TH', 'TR', 'UL']);
const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'SVG', 'svg']);

/** Returns the readable text of `root`: words kept apart across block elements, no
 *  script or style text, nothing from factlens' own overlays. */
function readableText(root) {
  const parts = [];
  const walk = (node) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === Node.TEXT_NODE) {
        parts.push(child.data);
      } else if (child.nodeType === Node.ELEMENT_NODE && !SKIP.has(child.tagName) &&
                 !child.hasAttribute(HOST_ATTRIBUTE)) {
        const gap = BREAKS.has(child.tagName);
        if (gap) parts.push(' ');
        walk(child);
        if (gap) parts.push(' ');
      }
    }
  };
  walk(root);
  return squash(parts.join(''));
}

// X (x.com, twitter.com): cells are virtualised and recycled, so state is keyed by the
// status id of the permalink that wraps the post's time, never by node.
const X_ADAPTER = Object.freeze({
  name: 'x',
  selector: 'article[data-testid="tweet"]',
  textOf(post) {
    // The first tweetText is the post's own; a second one belongs to a quoted post.
    const text = post.querySelector('[data-testid="tweetText"]');
    return text ? readableText(text) : '';
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
    return readableText(post);
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
