// Types for the shared overlay UI (web/ui/overlay.js), importable as
// 'factlens/ui/overlay.js'.
import type { Verdict } from '../index.js';

/** Every string the overlay shows; `{name}` marks a value put in. */
export interface OverlayStrings {
  regionLabel: string;
  rating_false: string; rating_altered: string; rating_partly_false: string;
  rating_missing_context: string; rating_satire: string; rating_true: string;
  severity_low: string; severity_medium: string; severity_high: string;
  severity_critical: string;
  claimPrefix: string;
  /** `{publisher}` */
  reviewBy: string;
  noLink: string;
  /** `{rating}` */
  demotedNotice: string;
  showAnyway: string;
  /** `{severity}`, `{rating}` */
  hiddenNotice: string;
  showPost: string;
  why: string;
  /** `{rule}`, `{list}`, `{kind}`, `{score}` */
  whyRule: string;
  whyWords: string;
  stanceDebunks: string;
  notThisPost: string;
}

export const STRINGS_EN: Readonly<OverlayStrings>;
/** Strings from extension i18n: message `overlay_<key>` for each key, else `fallback`'s. */
export function stringsFromI18n(getMessage: (name: string) => string,
                                fallback?: OverlayStrings): Readonly<OverlayStrings>;
/** True only for absolute https URLs, the only links the overlay renders. */
export function isHttpsUrl(url: unknown): boolean;
/** The attribute on overlay hosts, so observers can skip what the overlay adds. */
export const HOST_ATTRIBUTE: 'data-factlens-overlay';

export interface OverlayOptions {
  strings?: OverlayStrings;
  theme?: 'auto' | 'light' | 'dark';
  /** Puts the host in the page; default: right before the post. */
  place?: (host: HTMLElement, target: Element) => void;
  /** Called when the reader clicks "show anyway" / "show post". */
  onReveal?: (target: Element) => void;
  /** Given: the label gets a "not this post" button; called (after the overlay is
   *  cleared) when the reader clicks it. */
  onDismiss?: (target: Element) => void;
}

export interface Overlay {
  /** The element holding the closed shadow root (not in the page while state is 'none'). */
  readonly host: HTMLElement;
  readonly state: 'none' | 'label' | 'demoted' | 'hidden';
  /** Shows the verdict: `label`, `demote` (post collapsed, "show anyway"), `hide`
   *  (placeholder, click-through), `none` (nothing). `text` lets "why?" quote the
   *  matched words; `revealed` starts a demoted/hidden post as already shown. */
  update(verdict: Verdict, options?: { text?: string; revealed?: boolean }): void;
  /** Removes the overlay and restores the post's own display. */
  remove(): void;
}

/** Returns an overlay for the post element `target`; nothing shows until update(). */
export function createOverlay(target: Element, options?: OverlayOptions): Overlay;
