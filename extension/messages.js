// Validation of the messages the background accepts. Only the extension's own contexts
// can reach runtime.onMessage, but a content script runs inside hostile pages: every
// message is shape-checked, and each type is accepted only from the kind of sender
// that has a reason to send it (content scripts in tabs, or the extension's own pages).

export const LIMITS = Object.freeze({
  batch: 500,           // texts per check message
  textChars: 100_000,   // characters per text (content.js sends at most this)
  totalChars: 4_000_000,
  urlChars: 2048,
  keyChars: 4096,
});

const CONTENT_TYPES = new Set(['check', 'found']);
const PAGE_TYPES = new Set(['status', 'subscribe', 'unsubscribe', 'update']);
// e2e builds only (config.testHooks): the clock, the alarm and engine fault injection.
const TEST_OPS = new Set(['advance-clock', 'alarm', 'compact-slack', 'exhaust-memory', 'memory',
                          'restart-engine']);

// A check over the port arrives as one JSON string (content.js says why); JSON escapes
// at most sextuple a character (a control character becomes \u00XX).
const PORT_JSON_CHARS = 6 * LIMITS.totalChars + 65_536;

/** Returns the message inside a port envelope's `json` string, or throws an Error that
 *  says what was wrong; the message still goes through validateMessage. */
export function parsePortMessage(json) {
  if (typeof json !== 'string') throw new Error('port message: json must be a string');
  if (json.length > PORT_JSON_CHARS) {
    throw new Error(`port message: ${json.length} characters of JSON (at most ${PORT_JSON_CHARS})`);
  }
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new Error(`port message: not JSON (${error.message})`);
  }
}

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function checkKeys(message, allowed) {
  for (const key of Object.keys(message)) {
    if (!allowed.includes(key)) return `unexpected field "${key}" in ${message.type} message`;
  }
  return null;
}

/** Returns null if `message` from `sender` is acceptable, else what is wrong with it.
 *  `testHooks` (e2e builds only) admits "test" messages from the extension's pages. */
export function validateMessage(message, sender, { id, extensionOrigin, testHooks = false }) {
  if (!sender || sender.id !== id) return 'message from another extension';
  if (!isPlainObject(message) || typeof message.type !== 'string') {
    return 'message must be an object with a string "type"';
  }
  const fromExtensionPage = typeof sender.url === 'string' && sender.url.startsWith(extensionOrigin);
  if (CONTENT_TYPES.has(message.type)) {
    if (fromExtensionPage || !sender.tab) return `${message.type}: only content scripts send this`;
  } else if (PAGE_TYPES.has(message.type) || (testHooks && message.type === 'test')) {
    if (!fromExtensionPage) return `${message.type}: only the extension's own pages send this`;
  } else {
    return `unknown message type "${message.type.slice(0, 40)}"`;
  }
  switch (message.type) {
    case 'check': {
      const bad = checkKeys(message, ['type', 'texts', 'context']);
      if (bad) return bad;
      const { texts, context } = message;
      if (!Array.isArray(texts) || texts.length > LIMITS.batch) {
        return `check: texts must be an array of at most ${LIMITS.batch} strings`;
      }
      let total = 0;
      for (let i = 0; i < texts.length; i++) {
        if (typeof texts[i] !== 'string') return `check: texts[${i}] is not a string`;
        if (texts[i].length > LIMITS.textChars) {
          return `check: texts[${i}] has ${texts[i].length} characters (at most ${LIMITS.textChars})`;
        }
        total += texts[i].length;
      }
      if (total > LIMITS.totalChars) return `check: ${total} characters in one batch (at most ${LIMITS.totalChars})`;
      if (context !== undefined) {
        if (!isPlainObject(context)) return 'check: context must be an object';
        const badContext = checkKeys({ ...context, type: 'check' }, ['type', 'region', 'language']);
        if (badContext) return `check context: ${badContext}`;
        for (const k of ['region', 'language']) {
          if (context[k] !== undefined && (typeof context[k] !== 'string' || context[k].length > 35)) {
            return `check: context.${k} must be a short string`;
          }
        }
      }
      return null;
    }
    case 'found':
      return checkKeys(message, ['type', 'count']) ??
        (Number.isSafeInteger(message.count) && message.count >= 0 ? null
          : 'found: count must be a non-negative integer');
    case 'status':
    case 'update':
      return checkKeys(message, ['type']);
    case 'subscribe':
      return checkKeys(message, ['type', 'url', 'publicKey']) ??
        (typeof message.url === 'string' && message.url.length <= LIMITS.urlChars &&
         typeof message.publicKey === 'string' && message.publicKey.length <= LIMITS.keyChars
          ? null : 'subscribe: url and publicKey must be strings');
    case 'unsubscribe':
      return checkKeys(message, ['type', 'url']) ??
        (typeof message.url === 'string' ? null : 'unsubscribe: url must be a string');
    case 'test':
      return checkKeys(message, ['type', 'op', 'ms', 'bytes']) ??
        (!TEST_OPS.has(message.op) ? 'test: unknown op'
          : message.op === 'advance-clock' && !(Number.isSafeInteger(message.ms) && message.ms >= 0)
            ? 'test: ms must be a non-negative integer'
            : message.op === 'compact-slack' && !(Number.isSafeInteger(message.bytes) && message.bytes >= 0)
              ? 'test: bytes must be a non-negative integer' : null);
    default:
      return 'unreachable';
  }
}
