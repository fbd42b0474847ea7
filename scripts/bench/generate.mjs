// Deterministic synthetic workloads for `npm run bench` and the prefilter tests.
//
// A seeded PRNG (mulberry32) drives everything, so one seed gives byte-identical
// lists and posts on every machine. Vocabulary: pronounceable synthetic words with
// a Zipf (s = 1) frequency curve, as in natural text: a few words are everywhere,
// most are rare. Rules take their distinctive words from the rarer part of the
// vocabulary (as real claims name specific things); post filler is drawn from the
// whole curve. 5% of posts get a planted match of a random rule, some of them
// dressed up with the evasions the normaliser undoes (case, leetspeak, accents,
// lookalike letters, zero-width characters, hyphens, URL tracking parameters).

/** Returns a PRNG in [0, 1) from a 32-bit seed. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ONSETS = ['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v',
  'w', 'z', 'br', 'ch', 'cl', 'dr', 'fl', 'gr', 'pl', 'pr', 'sh', 'st', 'tr', 'th'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
const CODAS = ['', '', 'n', 'r', 's', 'l', 'm', 'x', 'nd', 'st'];

export function makeVocabulary(rand, size) {
  const seen = new Set();
  const words = [];
  while (words.length < size) {
    const syllables = 1 + Math.floor(rand() * 3);
    let w = '';
    for (let i = 0; i < syllables; i++) {
      w += ONSETS[Math.floor(rand() * ONSETS.length)] + VOWELS[Math.floor(rand() * VOWELS.length)];
    }
    w += CODAS[Math.floor(rand() * CODAS.length)];
    if (w.length < 3 || seen.has(w)) continue;
    seen.add(w);
    words.push(w);
  }
  return words;
}

// Zipf sampler over ranks [0, n): inverse CDF by binary search.
function zipfSampler(n, s = 1) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += 1 / Math.pow(i + 1, s);
    cdf[i] = sum;
  }
  return (rand) => {
    const x = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const RATINGS = ['false', 'altered', 'partly_false', 'missing_context', 'satire'];
const SEVERITIES = ['low', 'medium', 'high', 'critical'];
const VOCAB_SIZE = 30000;
// Rules take their distinctive words from ranks >= COMMON: the words that name a
// claim ("ivermectin", "chemtrails") are rarely among a language's top thousand.
const COMMON = 1000;

/** The seed of `npm run bench`'s workloads: `npm run bench:instructions` counts on
 * the same lists and posts. */
export const BENCH_SEED = 20250115;

/**
 * Returns { listText, rules, posts, planted } for `ruleCount` rules and
 * `postCount` posts. `rules` keeps, per rule, how to plant a match.
 */
export function generateWorkload({ seed = 1, ruleCount, postCount = 2000, plantRate = 0.05 }) {
  const rand = mulberry32(seed);
  const pick = (arr) => arr[Math.floor(rand() * arr.length)];
  const vocab = makeVocabulary(mulberry32(seed ^ 0x5eed), VOCAB_SIZE);
  const zipf = zipfSampler(VOCAB_SIZE);
  const common = () => vocab[zipf(rand)];
  // Distinctive words: a flatter Zipf over the rarer ranks, so some topics recur
  // across rules.
  const rareZipf = zipfSampler(VOCAB_SIZE - COMMON, 0.5);
  const rare = () => vocab[COMMON + rareZipf(rand)];

  const rules = [];
  const out = [];
  for (let i = 0; i < ruleCount; i++) {
    const id = `r${i}`;
    const topic = [rare(), rare(), rare(), rare()];
    const claimWords = [];
    const claimLength = 8 + Math.floor(rand() * 7);
    for (let k = 0; k < claimLength; k++) claimWords.push(k % 3 === 0 ? topic[k % 4] : common());
    const claim = claimWords.join(' ');
    const rule = {
      id,
      claim: claim[0].toUpperCase() + claim.slice(1) + '.',
      rating: pick(RATINGS),
      severity: rand() < 0.02 ? 'critical' : pick(SEVERITIES.slice(0, 3)),
      match: {},
      review: {
        url: `https://factcheck.example/${i}`,
        title: `No, ${topic[0]} ${topic[1]} is not ${topic[2]}`,
        publisher: 'Example Checks',
        date: '2025-01-15',
      },
    };
    const kindRoll = rand();
    let plant;
    if (kindRoll < 0.4) {
      // Patterns in the shapes fact-checkers write: a phrase with variants, a
      // proximity pattern, a stem; a few have no literal at all.
      const shape = i % 250 === 0 ? 3 : Math.floor(rand() * 3);
      const [a, b, c, d] = topic;
      if (shape === 0) {
        rule.match.patterns = [`\\b${a}s? (${b}|${c}) ${d}\\b`];
        plant = () => `${a} ${rand() < 0.5 ? b : c} ${d}`;
      } else if (shape === 1) {
        rule.match.patterns = [`\\b${a}\\W+(?:\\w+\\W+){0,3}${b}\\b`];
        plant = () => `${a} ${common()} ${common()} ${b}`;
      } else if (shape === 2) {
        rule.match.patterns = [`${a}${b.slice(0, 3)}\\w*`, `\\b${c} ${d}\\b`];
        plant = () => (rand() < 0.5 ? `${a}${b.slice(0, 3)}ing` : `${c} ${d}`);
      } else {
        // No usable literal: the prefilter must always check it.
        rule.match.patterns = [`\\b\\d{3}-\\d{2}-${i % 10}\\d{3}\\b`];
        plant = () => `123-45-${i % 10}678`;
      }
    } else if (kindRoll < 0.7) {
      const [a, b, c, d] = topic;
      const set = { all: [`${a} ${b}`], any: [c, `${d}*`], within: 12 };
      if (rand() < 0.2) set.none = ['debunked'];
      rule.match.keywords = [set];
      plant = () => `${a} ${b} ${common()} ${rand() < 0.5 ? c : d + 'ing'}`;
    } else if (kindRoll < 0.85) {
      const [a, b] = topic;
      if (rand() < 0.5) {
        rule.match.urls = [`https://${a}-news.example/${b}/${i}`];
        plant = () => `https://www.${a}-news.example/${b}/${i}?utm_source=share`;
      } else {
        rule.match.urls = [`${a}${i}.example`];
        plant = () => `https://m.${a}${i}.example/story`;
      }
    } else {
      rule.match.similar = [claim, `${topic[1]} ${common()} ${topic[0]} ${topic[3]}`];
      plant = () => claim;
    }
    if (rand() < 0.1) rule.examples = { match: [plant()], no_match: [common() + ' ' + common()] };
    out.push(rule);
    rules.push({ id, plant });
  }
  const list = {
    format: 'factlens/1',
    list: {
      id: `bench-${ruleCount}`,
      name: `Synthetic list of ${ruleCount} rules`,
      publisher: { name: 'factlens bench', url: 'https://factlens.example' },
      version: 1,
      issued: '2025-01-01T00:00:00Z',
      expires: '2099-01-01T00:00:00Z',
    },
    rules: out,
  };

  const posts = [];
  const planted = [];
  for (let p = 0; p < postCount; p++) {
    const length = 50 + Math.floor(rand() * 351);
    const words = [];
    for (let k = 0; k < length; k++) {
      let w = common();
      if (k === 0 || rand() < 0.03) w = w[0].toUpperCase() + w.slice(1);
      words.push(w);
      if (rand() < 0.08) words[words.length - 1] += pick([',', '.', '!', '?', ':']);
    }
    if (rand() < 0.05) words.splice(Math.floor(rand() * words.length), 0, `https://${common()}.example/${common()}`);
    if (rand() < plantRate) {
      const rule = rules[Math.floor(rand() * rules.length)];
      let phrase = rule.plant();
      if (rand() < 0.5) phrase = evade(phrase, rand);
      words.splice(Math.floor(rand() * words.length), 0, phrase);
      planted.push(p);
    }
    posts.push(words.join(' '));
  }
  return { listText: JSON.stringify(list), list, posts, planted };
}

const LEET = { a: '4', e: '3', i: '1', o: '0' };
const LOOKALIKE = { a: '\u0430', e: '\u0435', o: '\u043e', c: '\u0441', p: '\u0440' };  // Cyrillic

// Dresses up a phrase the way people evade filters; URLs are left to their own
// variants (they must stay URLs).
export function evade(phrase, rand) {
  if (phrase.includes('://')) return phrase;
  const kind = Math.floor(rand() * 5);
  const chars = [...phrase];
  switch (kind) {
    case 0:
      return phrase.toUpperCase();
    case 1:
      return chars.map((c) => (LEET[c] && rand() < 0.5 ? LEET[c] : c)).join('');
    case 2:
      return chars.map((c) => (LOOKALIKE[c] && rand() < 0.5 ? LOOKALIKE[c] : c)).join('');
    case 3:
      return chars.map((c) => (c === 'e' && rand() < 0.5 ? '\u00e9' : c)).join('').replace(/ /g, '  ');
    default:
      return chars.map((c, i) => (i % 3 === 1 && /[a-z]/.test(c) ? '\u200b' + c : c)).join('');
  }
}
