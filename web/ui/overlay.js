// factlens overlay UI: the label, demote ("show anyway") and hide (click-through)
// states of one post, drawn in a closed shadow root next to the post.
//
// One implementation for every embedding: annotate() in the npm package and the
// extension's content scripts import this file as it is (a plain ES module, no
// dependencies, no build step). Everything from a list or a page (claims, titles,
// publishers, post text) is set with textContent; nothing is ever parsed as HTML.
// Only https review links become links.
//
//   import { createOverlay } from './ui/overlay.js';
//   const overlay = createOverlay(postElement, { strings, onReveal });
//   overlay.update(verdict, { text: postText });   // label / demote / hide / none
//   overlay.remove();                               // everything back as it was

/** English strings. Keys are valid extension message names (`_locales/xx/messages.json`
 *  entries `overlay_<key>`, see stringsFromI18n); `{name}` marks a value put in. */
export const STRINGS_EN = Object.freeze({
  regionLabel: 'factlens fact-check',
  rating_false: 'False',
  rating_altered: 'Altered',
  rating_partly_false: 'Partly false',
  rating_missing_context: 'Missing context',
  rating_satire: 'Satire',
  rating_true: 'True',
  severity_low: 'low severity',
  severity_medium: 'medium severity',
  severity_high: 'high severity',
  severity_critical: 'could lead to violence',
  claimPrefix: 'Claim checked: ',
  reviewBy: 'Fact-check by {publisher}: ',
  noLink: '(no https link given)',
  demotedNotice: 'Post collapsed: {rating} claim. ',
  showAnyway: 'Show anyway',
  hiddenNotice: 'Post hidden ({severity}): {rating} claim. ',
  showPost: 'Show post',
  why: 'Why?',
  whyRule: 'Rule {rule} in list {list} ({kind}, score {score})',
  whyWords: 'Matched words: ',
  stanceDebunks: 'This post seems to debunk the claim.',
  notThisPost: 'Not this post',
});

/**
 * Returns overlay strings read through an extension's i18n (e.g.
 * `chrome.i18n.getMessage`), message names `overlay_<key>`; keys it lacks fall back
 * to `fallback`.
 * @param {(name: string) => string} getMessage
 */
export function stringsFromI18n(getMessage, fallback = STRINGS_EN) {
  const out = {};
  for (const key of Object.keys(fallback)) {
    const message = getMessage(`overlay_${key}`);
    out[key] = typeof message === 'string' && message !== '' ? message : fallback[key];
  }
  return Object.freeze(out);
}

/** Returns true only for an absolute https URL (the only links the overlay renders). */
export function isHttpsUrl(url) {
  if (typeof url !== 'string') return false;
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
}

// Captured once: a page that later patches these prototypes cannot reach the
// overlay's internals through them. (Guarded: the package also loads in Node, where
// annotate() is never called but this module is imported.)
const hasDom = typeof Element === 'function' && typeof Node === 'function';
const attachShadow = hasDom ? Element.prototype.attachShadow : null;
const setTextContent = hasDom
  ? Object.getOwnPropertyDescriptor(Node.prototype, 'textContent').set : null;

function format(template, values) {
  return template.replace(/\{(\w+)\}/g, (all, name) => (name in values ? values[name] : all));
}

const CSS = `
/* !important here beats a page's !important rules aimed at the host (for important
   declarations the shadow tree's own rules win), so page CSS cannot hide or shrink the
   label with opacity, height, transform, clip-path, position... */
:host { all: initial !important; display: block !important; visibility: visible !important;
  margin: 0 0 6px !important; contain: content !important; }
.box { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1d2330; background: #fff8e1; border: 1px solid #e0b64a; border-left-width: 4px;
  border-radius: 6px; padding: 6px 10px; }
.box[data-severity="high"], .box[data-severity="critical"] { border-color: #c2410c; background: #fff1ec; }
.box[data-state="hidden"] { background: #eef0f3; border-color: #6b7280; }
.badge { font-weight: 700; margin-right: 6px; }
.claim { font-style: italic; }
a { color: #0b57d0; }
button { font: inherit; margin-left: 4px; padding: 1px 8px; border-radius: 4px;
  border: 1px solid currentColor; background: transparent; color: inherit; cursor: pointer; }
button:focus-visible, a:focus-visible, .box:focus-visible { outline: 2px solid #0b57d0; outline-offset: 2px; }
.why { margin-top: 4px; font-size: 12px; }
.why[hidden] { display: none; }
mark { background: #fde68a; color: inherit; }
@media (prefers-color-scheme: dark) {
  :host(:not([data-theme="light"])) .box { color: #e8eaed; background: #3a3216; border-color: #a98a2c; }
  :host(:not([data-theme="light"])) .box[data-severity="high"],
  :host(:not([data-theme="light"])) .box[data-severity="critical"] { background: #41231a; border-color: #f08a5d; }
  :host(:not([data-theme="light"])) .box[data-state="hidden"] { background: #2a2d33; border-color: #9aa0a6; }
  :host(:not([data-theme="light"])) a { color: #8ab4f8; }
  :host(:not([data-theme="light"])) mark { background: #6b5a1e; }
}
:host([data-theme="dark"]) .box { color: #e8eaed; background: #3a3216; border-color: #a98a2c; }
:host([data-theme="dark"]) .box[data-severity="high"],
:host([data-theme="dark"]) .box[data-severity="critical"] { background: #41231a; border-color: #f08a5d; }
:host([data-theme="dark"]) .box[data-state="hidden"] { background: #2a2d33; border-color: #9aa0a6; }
:host([data-theme="dark"]) a { color: #8ab4f8; }
:host([data-theme="dark"]) mark { background: #6b5a1e; }
`;

const sheets = new WeakMap();  // one constructed sheet per document
function styleInto(root, doc) {
  // Constructed sheets are CSSOM, which a page's style-src CSP does not block.
  const Sheet = doc.defaultView?.CSSStyleSheet;
  if (typeof Sheet === 'function' && 'adoptedStyleSheets' in root) {
    let sheet = sheets.get(doc);
    if (!sheet) {
      sheet = new Sheet();
      sheet.replaceSync(CSS);
      sheets.set(doc, sheet);
    }
    root.adoptedStyleSheets = [sheet];
  } else {
    const style = doc.createElement('style');
    setTextContent.call(style, CSS);
    root.append(style);
  }
}

/** The attribute marking overlay hosts, so observers can skip what the overlay adds. */
export const HOST_ATTRIBUTE = 'data-factlens-overlay';

/**
 * Returns an overlay for `target` (a post element); nothing shows until update().
 * @param {Element} target
 * @param {{ strings?: object, theme?: 'auto'|'light'|'dark',
 *           place?: (host: Element, target: Element) => void,
 *           onReveal?: (target: Element) => void,
 *           onDismiss?: (target: Element) => void }} [options]
 */
export function createOverlay(target, options = {}) {
  const doc = target.ownerDocument;
  const strings = options.strings ?? STRINGS_EN;
  const host = doc.createElement('div');
  host.setAttribute(HOST_ATTRIBUTE, '');
  if (options.theme === 'light' || options.theme === 'dark') {
    host.setAttribute('data-theme', options.theme);
  }
  // Inline !important beats any page stylesheet rule aimed at the host.
  host.style.setProperty('display', 'block', 'important');
  host.style.setProperty('visibility', 'visible', 'important');
  const root = attachShadow.call(host, { mode: 'closed' });
  styleInto(root, doc);

  let collapsed = null;  // the target's own display value while we collapse it
  let revealed = false;
  let current = null;  // { verdict, text }

  const el = (tag, text, attrs) => {
    const node = doc.createElement(tag);
    if (text != null) setTextContent.call(node, String(text));
    for (const [name, value] of Object.entries(attrs ?? {})) node.setAttribute(name, value);
    return node;
  };
  const t = (key, values = {}) => format(strings[key] ?? STRINGS_EN[key] ?? key, values);
  const ratingName = (rating) => t(`rating_${rating}`);

  function collapse(on) {
    if (on && collapsed === null) {
      collapsed = [target.style.getPropertyValue('display'),
                   target.style.getPropertyPriority('display'), target.hasAttribute('style')];
      target.style.setProperty('display', 'none', 'important');
    } else if (!on && collapsed !== null) {
      const [value, priority, hadStyle] = collapsed;
      if (value) target.style.setProperty('display', value, priority);
      else target.style.removeProperty('display');
      if (!hadStyle && target.getAttribute('style') === '') target.removeAttribute('style');
      collapsed = null;
    }
  }

  function whyPanel(verdict, text, id) {
    const panel = el('div', null, { class: 'why', id, hidden: '' });
    for (const m of verdict.matches) {
      panel.append(el('div', t('whyRule', {
        rule: m.ruleId, list: m.listId, kind: m.kind, score: m.score.toFixed(2),
      })));
      if (typeof text === 'string' && m.spans.length) {
        const words = el('div', t('whyWords'));
        m.spans.forEach(([start, end], i) => {
          if (i) words.append(doc.createTextNode(', '));
          words.append(el('mark', text.slice(start, end)));
        });
        panel.append(words);
      }
    }
    if (verdict.stance === 'debunks') panel.append(el('div', t('stanceDebunks')));
    return panel;
  }

  function labelBox(verdict, text) {
    const top = verdict.matches[0];
    const box = el('div', null, {
      class: 'box', role: 'note', 'aria-label': t('regionLabel'),
      'data-state': 'label', 'data-severity': verdict.severity ?? '',
    });
    box.append(el('span', ratingName(verdict.rating), { class: 'badge' }));
    box.append(el('span', t('claimPrefix')), el('span', top.claim, { class: 'claim' }));
    const review = el('div');
    review.append(doc.createTextNode(t('reviewBy', { publisher: top.review.publisher })));
    if (isHttpsUrl(top.review.url)) {
      const link = el('a', top.review.title || top.review.url, {
        href: top.review.url, target: '_blank', rel: 'noopener noreferrer',
      });
      review.append(link);
    } else {
      review.append(el('span', `${top.review.title} ${t('noLink')}`));
    }
    box.append(review);
    const id = 'why';
    const toggle = el('button', t('why'), {
      type: 'button', 'aria-expanded': 'false', 'aria-controls': id, 'data-action': 'why',
    });
    const panel = whyPanel(verdict, text, id);
    toggle.addEventListener('click', () => {
      const open = toggle.getAttribute('aria-expanded') !== 'true';
      toggle.setAttribute('aria-expanded', String(open));
      panel.hidden = !open;
    });
    review.append(toggle);
    if (options.onDismiss) {
      // The reader says the label is wrong for this post: the embedder records that
      // (the extension keeps it locally) and the label goes.
      const dismiss = el('button', t('notThisPost'), { type: 'button', 'data-action': 'dismiss' });
      dismiss.addEventListener('click', () => {
        current = null;
        render();
        options.onDismiss(target);
      });
      review.append(dismiss);
    }
    box.append(panel);
    return box;
  }

  function noticeBox(verdict, state) {
    const box = el('div', null, {
      class: 'box', role: 'note', 'aria-label': t('regionLabel'),
      'data-state': state, 'data-severity': verdict.severity ?? '',
    });
    const values = {
      rating: ratingName(verdict.rating),
      severity: t(`severity_${verdict.severity}`),
    };
    box.append(el('span', t(state === 'hidden' ? 'hiddenNotice' : 'demotedNotice', values)));
    box.append(el('span', verdict.matches[0].claim, { class: 'claim' }));
    const button = el('button', t(state === 'hidden' ? 'showPost' : 'showAnyway'), {
      type: 'button', 'data-action': 'reveal',
    });
    button.addEventListener('click', () => {
      revealed = true;
      render();
      options.onReveal?.(target);
      // Keep keyboard users where they were: on the label that replaced the notice.
      root.querySelector('.box')?.focus();
    });
    box.append(button);
    return box;
  }

  function render() {
    root.querySelectorAll('.box').forEach((node) => node.remove());
    const verdict = current?.verdict;
    if (!verdict || verdict.action === 'none' || !verdict.matches?.length) {
      collapse(false);
      host.remove();
      return;
    }
    let state = verdict.action === 'hide' ? 'hidden'
      : verdict.action === 'demote' ? 'demoted' : 'label';
    if (revealed) state = 'label';
    collapse(state !== 'label');
    const box = state === 'label' ? labelBox(verdict, current.text) : noticeBox(verdict, state);
    box.tabIndex = -1;
    root.append(box);
    host.setAttribute('data-state', state);
    if (!host.isConnected || host.nextElementSibling !== target) {
      (options.place ?? ((h, tg) => tg.before(h)))(host, target);
    }
  }

  return {
    host,
    /** The state shown: 'none', 'label', 'demoted' or 'hidden'. */
    get state() {
      return host.isConnected ? host.getAttribute('data-state') : 'none';
    },
    /** Shows `verdict`; `text` (the checked text) lets "why?" quote the matched words;
     *  `revealed` starts demoted/hidden posts as already shown. */
    update(verdict, { text, revealed: shown } = {}) {
      current = { verdict, text };
      if (shown !== undefined) revealed = Boolean(shown);
      render();
    },
    /** Removes the overlay and gives the post back its own display. */
    remove() {
      current = null;
      collapse(false);
      host.remove();
    },
  };
}
