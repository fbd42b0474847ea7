// Site adapters (classic content script; shares the isolated world's globals with
// overlay.js and content.js). Each adapter says which elements are posts, reads a post
// (its text, the key that identifies it across re-renders and recycled nodes, author
// and permalink), and which containers belong to its site so the generic adapter
// leaves them alone. Selectors: ../shared/notes/sites.md. Adapters are tried in order;
// the generic one comes last and takes only what no site adapter claims, so a site
// whose markup changed falls back to it instead of losing its labels.
//
// An adapter may also say where a demoted post can safely be moved below the others:
// reorder(post) returns { container, trailing } (the post's parent and the site's own
// separator nodes after it that belong to it) or null. Only sites whose markup no
// framework owns have it (old Reddit); content.js moves nothing anywhere else.
//
// Keys come from the post's own identity (status id, permalink, data-urn, comment id),
// never from the node: sites unmount, re-create and reuse nodes for other posts. Where
// a site shows no id, the key is a hash of the text (the same text is the same post).
//
// Nothing here clicks "see more" or "translate" for the reader: a truncated post is
// checked on the text it shows, and checked again when the site expands or translates
// it (a mutation of the same node); content.js keeps the strongest verdict per key.

const MAX_TEXT_CHARS = 100_000;  // messages.js LIMITS.textChars

const squash = (text) => text.replace(/\s+/g, ' ').trim().slice(0, MAX_TEXT_CHARS);

// Elements whose boundaries separate words (textContent would glue "<h2>Energy</h2>
// <p>Wind" into "EnergyWind"); decided by tag, since computed styles cost layout work.
const BREAKS = new Set(['ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BR', 'DD', 'DIV', 'DL',
  'DT', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HR',
  'LI', 'MAIN', 'NAV', 'OL', 'P', 'PRE', 'SECTION', 'TABLE', 'TD', 'TH', 'TR', 'UL']);
const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'SVG', 'svg', 'BUTTON']);

/** Returns the readable text of `roots` (an element, a list or null): words kept apart across
 *  block elements, no script, style or button text, nothing from factlens' own
 *  overlays, and nothing inside an element matching `skip` (a selector). */
function readableText(roots, skip = null) {
  const parts = [];
  const walk = (node) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === Node.TEXT_NODE) {
        parts.push(child.data);
      } else if (child.nodeType === Node.ELEMENT_NODE && !SKIP.has(child.tagName) &&
                 !child.hasAttribute(HOST_ATTRIBUTE) && !(skip && child.matches(skip))) {
        const gap = BREAKS.has(child.tagName);
        if (gap) parts.push(' ');
        walk(child);
        if (gap) parts.push(' ');
      }
    }
  };
  for (const root of (roots == null ? [] : roots instanceof Element ? [roots] : roots)) {
    if (!root) continue;
    walk(root);
    parts.push(' ');
  }
  return squash(parts.join(''));
}

/** Returns a short stable hash of `text` (cyrb53, base 36): keys for posts without an
 *  id, and the form in which "not this post" exceptions are stored. */
function hashText(text) {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

// The href attribute as written (pathname-relative on most sites), or null.
const hrefOf = (el) => el?.getAttribute('href') ?? null;
// An absolute https/http URL for a site-relative href; null for anything else. Posts'
// permalinks are getters calling this: URL parsing per post is not free, and only the
// popup and the tests ask for them.
function absolute(href) {
  if (!href) return null;
  try {
    const url = new URL(href, location.href);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}
const textKey = (prefix, text) => `${prefix}-text:${hashText(text)}`;

// Hostnames of the sites with their own adapter (subdomains included).
const SITE_HOSTS = Object.freeze([
  ['x', /(^|\.)(x|twitter)\.com$/],
  ['facebook', /(^|\.)facebook\.com$/],
  ['reddit', /(^|\.)reddit\.com$/],
  ['bluesky', /(^|\.)bsky\.app$/],
  ['youtube', /(^|\.)youtube\.com$/],
  ['threads', /(^|\.)threads\.(net|com)$/],
  ['linkedin', /(^|\.)linkedin\.com$/],
]);
/** The switchable sites, in the order the options page lists them. */
const FACTLENS_SITES = Object.freeze(['x', 'facebook', 'reddit', 'mastodon', 'bluesky',
  'youtube', 'threads', 'linkedin', 'generic']);

/** Returns the site id of the page: one of FACTLENS_SITES. Mastodon runs on any
 *  instance, so it is known by its markup (the web app's root), not its host. */
function pageSite(doc = document) {
  const host = doc.location?.hostname ?? '';
  for (const [site, pattern] of SITE_HOSTS) if (pattern.test(host)) return site;
  if (doc.getElementById('mastodon') || doc.querySelector('a[href*="joinmastodon.org/apps"]')) {
    return 'mastodon';
  }
  return 'generic';
}

// ---------------------------------------------------------------------------------
// X (x.com, twitter.com). Cells are virtualised and recycled: the key is the status
// id of the permalink that wraps the post's time. A quoted tweet is a unit of its own
// (a div[role=link] with the second tweetText inside the article): labelled where it
// sits, and left out of the quoting tweet's text. Long tweets are cut with a
// "Show more" link outside tweetText; when it expands in place, tweetText changes.
const X_TWEET = 'article[data-testid="tweet"]';
const X_QUOTE = `${X_TWEET} div[role="link"]`;
const statusId = (href) => href?.match(/\/status\/(\d{1,25})(?:[/?#]|$)/)?.[1] ?? null;
function xPermalink(scope, exclude) {
  for (const time of scope.querySelectorAll('time')) {
    if (exclude && exclude.contains(time)) continue;
    const link = time.closest('a[href*="/status/"]');
    if (link && scope.contains(link)) return hrefOf(link);
  }
  return null;
}
const X_ADAPTER = Object.freeze({
  name: 'x',
  site: 'x',
  selector: `${X_TWEET}, ${X_QUOTE}`,
  claims: `[data-testid="cellInnerDiv"], ${X_TWEET}`,
  accepts(element) {
    // A role=link inside a tweet is a quoted tweet only if it carries tweet text (cards
    // and media links are role=link too).
    return element.tagName === 'ARTICLE' ||
      Boolean(element.querySelector('[data-testid="tweetText"]'));
  },
  read(post) {
    if (post.tagName !== 'ARTICLE') {
      const text = readableText(post.querySelector('[data-testid="tweetText"]'));
      const href = xPermalink(post, null);
      const id = statusId(href);
      const outer = statusId(xPermalink(post.closest(X_TWEET), post));
      return {
        text,
        key: id ? `x:${id}` : `x-quote:${outer ?? ''}:${hashText(text)}`,
        author: post.querySelector('[data-testid="User-Name"]')?.textContent.trim() ?? null,
        get permalink() { return absolute(href); },
        quote: true,
      };
    }
    const quote = [...post.querySelectorAll('div[role="link"]')]
      .find((q) => q.querySelector('[data-testid="tweetText"]'));
    const own = [...post.querySelectorAll('[data-testid="tweetText"]')]
      .find((t) => !quote?.contains(t));
    const text = own ? readableText(own) : '';
    const href = xPermalink(post, quote);
    const id = statusId(href);
    const authorLink = post.querySelector('[data-testid="User-Name"] a[href^="/"]');
    return {
      text,
      key: id ? `x:${id}` : textKey('x', text),
      author: authorLink ? hrefOf(authorLink).split('/')[1] : null,
      get permalink() { return absolute(href); },
      truncated: Boolean(post.querySelector('[data-testid="tweet-text-show-more-link"]')),
    };
  },
});

// ---------------------------------------------------------------------------------
// Facebook. Obfuscated classes, so only ARIA and data attributes: feed units carry
// aria-posinset (older markup: data-pagelet="FeedUnit_…"). The message block is
// [data-ad-preview="message"] (or the comet variant); without it, the post's readable
// text minus the header, buttons ("See more", reactions) and comments (role=article).
// Facebook removes foreign wrappers, so nothing is wrapped or moved; the overlay sits
// before the unit, as a sibling.
const FB_POST = '[role="feed"] [aria-posinset], [data-pagelet^="FeedUnit_"]';
const FB_MESSAGE = '[data-ad-preview="message"], [data-ad-comet-preview="message"]';
function facebookId(href) {
  if (!href || href === '#') return null;
  const m = href.match(/\/posts\/([\w-]{1,80})/) ?? href.match(/[?&]story_fbid=([\w-]{1,80})/) ??
    href.match(/\/permalink\/(\d{1,25})/) ?? href.match(/[?&]fbid=(\d{1,25})/);
  return m?.[1] ?? null;
}
const FACEBOOK_ADAPTER = Object.freeze({
  name: 'facebook',
  site: 'facebook',
  selector: FB_POST,
  claims: FB_POST,
  active: (site) => site === 'facebook',
  accepts(element) {
    return !element.querySelector(FB_POST);
  },
  read(post) {
    const message = post.querySelector(FB_MESSAGE);
    const text = message
      ? readableText(message, '[role="button"]')
      : readableText(post, 'h2, h3, h4, [role="button"], [role="article"], [role="toolbar"], ' +
                           'form, [aria-label][role="group"], a[href*="/posts/"], a[href*="story_fbid"]');
    const link = [...post.querySelectorAll('a[href]')].find((a) => facebookId(hrefOf(a)) &&
                                                            !a.closest('[role="article"]'));
    const id = facebookId(hrefOf(link));
    const author = post.querySelector('h2 a, h3 a, h4 a, strong a');
    return {
      text,
      key: id ? `fb:${id}` : textKey('fb', text),
      author: author?.textContent.trim() ?? null,
      get permalink() { return absolute(hrefOf(link)); },
      truncated: [...post.querySelectorAll('[role="button"]')]
        .some((b) => message?.contains(b)),
    };
  },
});

// ---------------------------------------------------------------------------------
// Reddit, new (shreddit): posts and comments are custom elements with shadow roots.
// Shadow-root edits are fragile (selectors inside change without notice), so only
// host attributes (id/thingid, permalink, author, post-title) and the light-DOM
// children the page slots in ([slot="title"], [slot="text-body"], [slot="comment"]).
// Ads (shreddit-ad-post) are not posts. The overlay takes the post's slot attribute,
// so a nested comment's label is slotted where the comment is.
const REDDIT_NEW = 'shreddit-post, shreddit-comment';
const REDDIT_NEW_ADAPTER = Object.freeze({
  name: 'reddit',
  site: 'reddit',
  selector: REDDIT_NEW,
  claims: `${REDDIT_NEW}, shreddit-ad-post`,
  read(post) {
    const comment = post.tagName === 'SHREDDIT-COMMENT';
    const own = (slot) => [...post.children].filter((c) => c.getAttribute('slot') === slot);
    let text;
    if (comment) {
      text = readableText(own('comment'));
    } else {
      const title = own('title');
      text = readableText([...(title.length ? title : []), ...own('text-body')]);
      if (!title.length) text = squash(`${post.getAttribute('post-title') ?? ''} ${text}`);
    }
    const id = post.getAttribute(comment ? 'thingid' : 'id') ?? '';
    const permalink = post.getAttribute('permalink');
    return {
      text,
      key: /^t[13]_\w{1,20}$/.test(id) ? `reddit:${id}`
        : permalink ? `reddit-link:${permalink}` : textKey('reddit', text),
      author: post.getAttribute('author'),
      get permalink() { return absolute(permalink); },
    };
  },
});

// Reddit, old: .thing with data-fullname (t3_ link posts, t1_ comments). A comment's
// own text is its entry's .md; replies are nested .things and read on their own.
//
// The one adapter that lets a demoted post move (reorder, below): old Reddit's listing
// is server-rendered HTML that its jQuery scripts (and RES) find by class and handle
// by delegated events, never by position, and no framework re-renders the listing
// from state, so a .thing moved within #siteTable stays where it is put and keeps
// working. Only link posts of the listing move: a comment's place is its thread.
const REDDIT_OLD = '.thing[data-fullname^="t3_"], .thing[data-fullname^="t1_"]';
const REDDIT_OLD_LISTING = '#siteTable, .sitetable.linklisting';
const REDDIT_OLD_ADAPTER = Object.freeze({
  name: 'reddit-old',
  site: 'reddit',
  selector: REDDIT_OLD,
  claims: REDDIT_OLD,
  read(post) {
    const entry = [...post.children].find((c) => c.classList.contains('entry'));
    const title = entry?.querySelector('a.title');
    const body = entry?.querySelectorAll('.md');
    const text = readableText([title, ...(body ?? [])]);
    const permalink = post.getAttribute('data-permalink') ??
      hrefOf(entry?.querySelector('a.bylink, a.comments'));
    return {
      text,
      key: `reddit:${post.getAttribute('data-fullname')}`,
      author: post.getAttribute('data-author'),
      get permalink() { return absolute(permalink); },
    };
  },
  // A listed link post and the empty div.clearleft the listing puts after each .thing
  // (it ends the thing's floats: it goes with the thing, or the layout breaks).
  reorder(post) {
    const container = post.parentElement;
    if (!post.matches('.thing[data-fullname^="t3_"]') || !container?.matches(REDDIT_OLD_LISTING)) {
      return null;
    }
    const next = post.nextElementSibling;
    const trailing = next?.matches('.clearleft:empty') ? [next] : [];
    return { container, trailing };
  },
});

// ---------------------------------------------------------------------------------
// Mastodon (any instance: known by its root element). The virtualised list keeps an
// article[data-id] per status; off screen it keeps the height and renders spans only
// (display name and the content's raw HTML as text), so the post is the inner
// .status[data-id], which exists only while rendered. Translation replaces the
// content text in the same node: the same key, a new text.
const MASTODON_ADAPTER = Object.freeze({
  name: 'mastodon',
  site: 'mastodon',
  selector: '.status[data-id]',
  claims: 'article[data-id], .status[data-id], .status__wrapper',
  active: (site) => site === 'mastodon',
  read(post) {
    const content = post.querySelector('.status__content__text') ??
      post.querySelector('.status__content');
    const spoiler = post.querySelector('.status__content .spoiler-text, .status__content__spoiler');
    // A content warning hides the text until opened; its summary is still checked.
    const text = readableText(spoiler && !content?.contains(spoiler) ? [spoiler, content] : [content],
                              'button, .status__content__spoiler-link');
    const link = post.querySelector('a.status__relative-time');
    return {
      text,
      key: `mastodon:${location.host}:${post.getAttribute('data-id')}`,
      author: hrefOf(post.querySelector('a.status__display-name'))?.replace(/^\//, '') ?? null,
      get permalink() { return absolute(hrefOf(link)); },
      truncated: Boolean(post.querySelector('.status__content--collapsed')),
    };
  },
});

// ---------------------------------------------------------------------------------
// Bluesky. Feed items are [data-testid="feedItem-by-<handle>"] (thread pages
// postThreadItem-by-), linking to /profile/<handle>/post/<rkey>. Text is postText;
// a translation is appended in the post's content area (TranslatedPost), so the
// content area's text is read, minus buttons ("Show more", "Translate"). A quoted post
// (an embed with a postText of its own) is a unit of its own, as on X.
const BSKY_ITEM = '[data-testid^="feedItem-by-"], [data-testid^="postThreadItem-by-"]';
const BSKY_EMBED = '[data-testid^="contentHider-embed"]';
const BSKY_POST = `${BSKY_ITEM}, :is(${BSKY_ITEM}) ${BSKY_EMBED}`;
const bskyPost = (href) => href?.match(/\/profile\/([^/?#]{1,253})\/post\/([\w-]{1,64})/) ?? null;
const BLUESKY_ADAPTER = Object.freeze({
  name: 'bluesky',
  site: 'bluesky',
  selector: BSKY_POST,
  claims: BSKY_ITEM,
  accepts(element) {
    return !element.matches(BSKY_EMBED) || Boolean(element.querySelector('[data-testid="postText"]'));
  },
  read(post) {
    if (post.matches(BSKY_EMBED)) {
      const text = readableText(post.querySelectorAll('[data-testid="postText"]'));
      const href = hrefOf(post.querySelector('a[href*="/post/"]'));
      const m = bskyPost(href);
      return {
        text,
        key: m ? `bsky:${m[1]}/${m[2]}` : textKey('bsky-quote', text),
        author: m?.[1] ?? null,
        get permalink() { return absolute(href); },
        quote: true,
      };
    }
    const hider = post.querySelector('[data-testid="contentHider-post"]');
    const postText = [...post.querySelectorAll('[data-testid="postText"]')]
      .find((t) => !t.closest(BSKY_EMBED));
    const area = hider ?? postText?.parentElement;
    const text = area ? readableText(area, `[role="button"], ${BSKY_EMBED}`) : '';
    const own = bskyPost(hrefOf(post)) ? hrefOf(post) : null;
    const href = own ?? hrefOf([...post.querySelectorAll('a[href*="/post/"]')]
      .find((a) => !a.closest(BSKY_EMBED)));
    const m = bskyPost(href);
    return {
      text,
      key: m ? `bsky:${m[1]}/${m[2]}` : textKey('bsky', text),
      author: post.getAttribute('data-testid').replace(/^(feedItem|postThreadItem)-by-/, ''),
      get permalink() { return absolute(href); },
    };
  },
});

// ---------------------------------------------------------------------------------
// YouTube comments. Polymer reuses comment elements for other comments (the data
// changes, the node stays), and the comment id is a main-world property the isolated
// world cannot see; the published-time link carries it as ?lc=<id>, so the key is
// read from the link every time and changes when the element is reused.
const YT_COMMENT = 'ytd-comment-view-model, ytd-comment-renderer';
const YOUTUBE_ADAPTER = Object.freeze({
  name: 'youtube',
  site: 'youtube',
  selector: YT_COMMENT,
  claims: `ytd-comment-thread-renderer, ${YT_COMMENT}`,
  read(post) {
    const body = post.querySelector('#content-text');
    const text = body ? readableText(body) : '';
    const link = post.querySelector('#published-time-text a, a#published-time-text');
    const lc = hrefOf(link)?.match(/[?&]lc=([\w.-]{1,100})/)?.[1];
    return {
      text,
      key: lc ? `yt:${lc}` : textKey('yt', text),
      author: post.querySelector('#author-text, #header-author a')?.textContent.trim() ?? null,
      get permalink() { return absolute(hrefOf(link)); },
      truncated: Boolean(post.querySelector('#more:not([hidden]), .more-button:not([hidden])')),
    };
  },
});

// ---------------------------------------------------------------------------------
// Threads (weakest evidence). No article; posts are pressable containers. The text is
// the container's span[dir=auto] blocks outside links (author, time) and buttons.
const THREADS_POST = 'div[data-pressable-container="true"]';
const THREADS_ADAPTER = Object.freeze({
  name: 'threads',
  site: 'threads',
  selector: THREADS_POST,
  claims: THREADS_POST,
  active: (site) => site === 'threads',
  accepts(element) {
    return Boolean(element.querySelector('a[href*="/post/"]')) &&
      !element.querySelector(THREADS_POST);
  },
  read(post) {
    const spans = [...post.querySelectorAll('span[dir="auto"]')].filter((s) =>
      !s.closest('a, [role="button"]') && !s.parentElement.closest('span[dir="auto"]'));
    const text = readableText(spans);
    const link = [...post.querySelectorAll('a[href*="/post/"]')].find((a) => a.querySelector('time')) ??
      post.querySelector('a[href*="/post/"]');
    const m = hrefOf(link)?.match(/\/@([\w.]{1,64})\/post\/([\w-]{1,64})/);
    return {
      text,
      key: m ? `threads:${m[2]}` : textKey('threads', text),
      author: m?.[1] ?? post.querySelector('a[href^="/@"]')?.textContent.trim() ?? null,
      get permalink() { return absolute(hrefOf(link)); },
    };
  },
});

// ---------------------------------------------------------------------------------
// LinkedIn: the classic feed (data-urn on the update) and the 2025 server-driven UI
// (componentkey; text in expandable-text-box). "…see more" expands the text in place.
const LI_CLASSIC = 'div.feed-shared-update-v2[data-urn^="urn:li:activity:"]';
const LI_SDUI = 'div[componentkey^="container-update-list_mainFeed"], ' +
  'div[data-view-name="feed-full-update"]';
const urnIn = (value) => value?.match(/urn:li:(?:activity|share|ugcPost):\d{1,25}/)?.[0] ?? null;
const LINKEDIN_ADAPTER = Object.freeze({
  name: 'linkedin',
  site: 'linkedin',
  selector: `${LI_CLASSIC}, ${LI_SDUI}`,
  claims: `${LI_CLASSIC}, ${LI_SDUI}`,
  accepts(element) {
    return !element.querySelector(`${LI_CLASSIC}, ${LI_SDUI}`);
  },
  read(post) {
    const body = post.querySelector('.update-components-text, .feed-shared-inline-show-more-text, ' +
                                    '[data-testid="expandable-text-box"]');
    const text = body ? readableText(body, 'button, [data-testid="expandable-text-button"]') : '';
    const link = post.querySelector('a[href*="/feed/update/urn:li:"]');
    const urn = urnIn(post.getAttribute('data-urn')) ?? urnIn(post.getAttribute('componentkey')) ??
      urnIn(hrefOf(link));
    return {
      text,
      key: urn ? `li:${urn}` : textKey('li', text),
      author: post.querySelector('.update-components-actor__title, .update-components-actor__name')
        ?.textContent.trim() ?? null,
      permalink: urn ? `https://www.linkedin.com/feed/update/${urn}/` : absolute(hrefOf(link)),
      truncated: Boolean(post.querySelector('.feed-shared-inline-show-more-text__see-more-less-toggle, ' +
                                            '[data-testid="expandable-text-button"]')),
    };
  },
});

// ---------------------------------------------------------------------------------
// Every other page, and the fallback on the sites above: the ARIA and HTML shapes
// feeds use. The innermost candidate is the post (a feed item wrapping an article is
// labelled once, at the article); anything a site adapter claims is left to it.
const GENERIC_SELECTOR = 'article, [role="article"], [role="feed"] > *, [aria-posinset]';
const SITE_ADAPTERS = Object.freeze([X_ADAPTER, FACEBOOK_ADAPTER, REDDIT_NEW_ADAPTER,
  REDDIT_OLD_ADAPTER, MASTODON_ADAPTER, BLUESKY_ADAPTER, YOUTUBE_ADAPTER, THREADS_ADAPTER,
  LINKEDIN_ADAPTER]);

function makeGenericAdapter(claims) {
  return Object.freeze({
    name: 'generic',
    site: 'generic',
    selector: GENERIC_SELECTOR,
    claims: GENERIC_SELECTOR,
    accepts(element) {
      if (element.hasAttribute(HOST_ATTRIBUTE)) return false;
      if (element.querySelector(`${GENERIC_SELECTOR}, ${claims}`)) return false;
      return !element.closest(claims);
    },
    read(post) {
      const text = readableText(post);
      return { text, key: textKey('page', text), author: null, permalink: null };
    },
  });
}

/**
 * Returns the adapters for a page of site `site` (pageSite()), the generic one last:
 * { adapters, selector (every post selector, for the observer), adapterFor(element) }.
 */
function adaptersForSite(site) {
  const active = SITE_ADAPTERS.filter((a) => a.active?.(site) ?? true);
  const claims = active.map((a) => a.claims).join(', ');
  const adapters = Object.freeze([...active, makeGenericAdapter(claims)]);
  return Object.freeze({
    site,
    adapters,
    selector: adapters.map((a) => a.selector).join(', '),
    /** Returns the adapter that owns `element` as a post, or null. */
    adapterFor(element) {
      for (const adapter of adapters) {
        if (element.matches(adapter.selector) && (adapter.accepts?.(element) ?? true)) return adapter;
      }
      return null;
    },
  });
}
