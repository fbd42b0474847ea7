// Copyright factlens authors.
//
// Word lists are in normalised form (normalize.h: case folded, diacritics removed,
// apostrophes split words: "don't" -> "don t", "Lüge" -> "luge"). A trailing '*'
// matches any word with that start.
#include "factlens/stance.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_set>

namespace factlens {
namespace {

using Phrase = std::vector<std::string_view>;

// Words that negate a statement (en, de, fr, es). Not "nobody" or "nothing": they
// rarely deny the claim next to them ("5G spreads it and nobody talks about it").
const std::unordered_set<std::string_view>& Negations() {
  static const auto* set = new std::unordered_set<std::string_view>{
      "not",    "no",     "never", "isnt",    "dont", "doesnt", "didnt",  "arent",
      "wasnt",  "werent", "aint",  "nicht",   "kein", "keine",  "keinen", "keinem",
      "keiner", "keines", "nie",   "niemals", "pas",  "jamais", "nunca",  "jamas",
  };
  return *set;
}

// "t" is a negation after the auxiliaries English contracts with n't.
bool IsContractedNot(std::string_view previous, std::string_view word) {
  static const auto* aux = new std::unordered_set<std::string_view>{
      "don", "doesn",  "didn",    "isn",    "aren", "wasn",  "weren", "won",
      "can", "couldn", "shouldn", "wouldn", "hasn", "haven", "hadn",  "ain"};
  return word == "t" && aux->count(previous) > 0;
}

// Cues that call a claim false, single words or phrases.
const std::vector<Phrase>& RefutationCues() {
  static const auto* cues = new std::vector<Phrase>{
      // English
      {"false"},
      {"falsely"},
      {"fake"},
      {"faked"},
      {"hoax*"},
      {"myth"},
      {"myths"},
      {"debunk*"},
      {"untrue"},
      {"misinformation"},
      {"disinformation"},
      {"misleading"},
      {"fabricated"},
      {"rumor*"},
      {"rumour*"},
      {"lie"},
      {"lies"},
      {"bogus"},
      {"baseless"},
      {"factcheck*"},
      {"fact", "check*"},
      {"fact", "checked"},
      {"not", "true"},
      {"isn", "t", "true"},
      {"no", "evidence"},
      {"snopes"},
      {"conspiracy", "theor*"},
      {"nonsense"},
      {"disproven"},
      {"refuted"},
      // German
      {"falsch*"},
      {"luge"},
      {"lugen"},
      {"gerucht*"},
      {"widerlegt"},
      {"faktencheck*"},
      {"erfunden"},
      {"irrefuhrend*"},
      {"unsinn"},
      {"quatsch"},
      {"verschworungs*"},
      {"stimmt", "nicht"},
      // French
      {"faux"},
      {"fausse*"},
      {"infox"},
      {"intox"},
      {"rumeur*"},
      {"mensonge*"},
      {"canular*"},
      {"dementi*"},
      {"trompeu*"},
      // Spanish
      {"falso"},
      {"falsa"},
      {"falsos"},
      {"falsas"},
      {"bulo*"},
      {"mentira*"},
      {"desmentid*"},
      {"enganos*"},
  };
  return *cues;
}

// Cues of sarcasm or irony: the post may mean the opposite of what it says.
const std::vector<Phrase>& SarcasmCues() {
  static const auto* cues = new std::vector<Phrase>{
      {"yeah", "right"},
      {"sure", "jan"},
      {"as", "if"},
      {"lol"},
      {"lmao"},
      {"rofl"},
      {"totally", "legit"},
      {"oh", "sure"},
      {"because", "that", "makes", "sense"},
      {"ja", "klar"},
      {"na", "klar"},
      {"jaja"},
      {"ja", "ja"},
      {"mdr"},
      {"jajaja"},
  };
  return *cues;
}

// Sites whose business is checking claims; a post linking one is correcting.
// Entries are canonical URL prefixes (normalize.h): a host covers its subdomains.
const char* const kFactCheckSites[] = {
    "snopes.com",
    "politifact.com",
    "factcheck.org",
    "fullfact.org",
    "factcheck.afp.com",
    "factuel.afp.com",
    "faktencheck.afp.com",
    "leadstories.com",
    "healthfeedback.org",
    "sciencefeedback.co",
    "climatefeedback.org",
    "checkyourfact.com",
    "truthorfiction.com",
    "africacheck.org",
    "boomlive.in",
    "altnews.in",
    "factly.in",
    "correctiv.org",
    "mimikama.at",
    "mimikama.org",
    "dpa-factchecking.com",
    "maldita.es",
    "newtral.es",
    "chequeado.com",
    "aosfatos.org",
    "pagellapolitica.it",
    "facta.news",
    "misbar.com",
    "logically.ai",
    "reuters.com/fact-check",
    "apnews.com/hub/ap-fact-check",
    "usatoday.com/story/news/factcheck",
    "bbc.co.uk/news/reality_check",
    "lemonde.fr/les-decodeurs",
    "liberation.fr/checknews",
    "tagesschau.de/faktenfinder",
};

// For each byte b, the cues of `cues` (their indices, in list order) that can
// match at a word starting with b: those whose first word starts with b, and
// those whose first word is empty or starts with '*' (tried at every word).
using CueIndex = std::vector<std::vector<uint16_t>>;
CueIndex IndexByFirstByte(const std::vector<Phrase>& cues) {
  CueIndex index(256);
  for (size_t c = 0; c < cues.size(); ++c) {
    const std::string_view first = cues[c].at(0);
    for (int b = 0; b < 256; ++b) {
      if (first.empty() || first[0] == '*' || static_cast<uint8_t>(first[0]) == b)
        index[b].push_back(static_cast<uint16_t>(c));
    }
  }
  return index;
}
// The byte a word's cues are indexed by (an empty word: 0, where only cues whose
// first word is empty or "*..." are).
uint8_t FirstByte(std::string_view word) {
  return word.empty() ? 0 : static_cast<uint8_t>(word[0]);
}
const CueIndex& RefutationCuesByByte() {
  static const auto* index = new CueIndex(IndexByFirstByte(RefutationCues()));
  return *index;
}
const CueIndex& SarcasmCuesByByte() {
  static const auto* index = new CueIndex(IndexByFirstByte(SarcasmCues()));
  return *index;
}

bool WordMatches(std::string_view pattern, std::string_view word) {
  if (!pattern.empty() && pattern.back() == '*') {
    pattern.remove_suffix(1);
    return word.size() >= pattern.size() && word.substr(0, pattern.size()) == pattern;
  }
  return word == pattern;
}

bool IsFactCheckUrl(std::string_view canonical, std::string_view review_host) {
  std::string_view host = CanonicalHost(canonical);
  host = host.substr(0, host.find(':'));
  auto host_is = [&](std::string_view site) {
    return host == site ||
           (host.size() > site.size() && host.substr(host.size() - site.size()) == site &&
            host[host.size() - site.size() - 1] == '.');
  };
  if (!review_host.empty() && host_is(review_host)) return true;
  for (std::string_view site : kFactCheckSites) {
    size_t slash = site.find('/');
    if (slash == std::string_view::npos) {
      if (host_is(site)) return true;
    } else if (host_is(site.substr(0, slash)) &&
               canonical.find(site.substr(slash)) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

// Returns the normalised words of `text`.
std::vector<std::string> WordsOf(std::string_view text) {
  NormalizedText n = Normalize(text);
  std::vector<std::string> out;
  for (const ByteRange& w : n.words)
    out.push_back(n.text.substr(w.begin, w.end - w.begin));
  return out;
}

// Whether words[i] negates: a negation word, or the "t" of a contraction.
template <typename Words>
bool IsNegationAt(const Words& words, size_t i) {
  return Negations().count(words[i]) > 0 ||
         (i > 0 && IsContractedNot(words[i - 1], words[i]));
}

int CountNegations(const std::vector<std::string>& words) {
  int count = 0;
  for (size_t i = 0; i < words.size(); ++i) count += IsNegationAt(words, i);
  return count;
}

// Whether `phrase` matches words[i, ...), ending before words[end].
bool PhraseAt(const Phrase& phrase, const std::vector<std::string_view>& words, int64_t i,
              int64_t end) {
  if (i + static_cast<int64_t>(phrase.size()) > end) return false;
  for (size_t k = 0; k < phrase.size(); ++k) {
    if (!WordMatches(phrase[k], words[i + k])) return false;
  }
  return true;
}

bool IsQuote(uint32_t c) {
  return c == '"' || c == 0x201C || c == 0x201D || c == 0x201E || c == 0xAB ||
         c == 0xBB || c == 0x2018 || c == 0x300C || c == 0x300D;
}

// Returns true if the bytes [begin, end) of `s` hold a quotation mark.
bool HasQuote(std::string_view s, size_t begin, size_t end) {
  end = std::min(end, s.size());
  for (size_t i = begin; i < end;) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    uint32_t c = b;
    size_t len = 1;
    if (b >= 0xF0 && i + 3 < s.size()) {
      c = ((b & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) |
          (s[i + 3] & 0x3Fu);
      len = 4;
    } else if (b >= 0xE0 && i + 2 < s.size()) {
      c = ((b & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
      len = 3;
    } else if (b >= 0xC0 && i + 1 < s.size()) {
      c = ((b & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
      len = 2;
    }
    if (IsQuote(c)) return true;
    i += len;
  }
  return false;
}

}  // namespace

const char* StanceName(Stance stance) {
  switch (stance) {
    case Stance::kRepeats:
      return "repeats";
    case Stance::kDebunks:
      return "debunks";
    case Stance::kUnclear:
      return "unclear";
  }
  return "unclear";
}

bool ParseStance(std::string_view name, Stance* out) {
  for (Stance s : {Stance::kRepeats, Stance::kDebunks, Stance::kUnclear}) {
    if (name == StanceName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

StanceReader::StanceReader(std::string_view original, const NormalizedText& post)
    : original_(original), post_(post) {
  const size_t n = post.words.size();
  words_.reserve(n);
  word_origins_.reserve(n);
  for (const ByteRange& w : post.words) {
    words_.push_back(std::string_view(post.text).substr(w.begin, w.end - w.begin));
    word_origins_.push_back(post.OriginalRange(w.begin, w.end));
  }
  // Sarcasm anywhere in the post: irony rarely sits next to the claim it mocks.
  // (Every cue that matches at every word counts.)
  const int64_t count = static_cast<int64_t>(n);
  for (int64_t i = 0; i < count; ++i) {
    for (uint16_t c : SarcasmCuesByByte()[FirstByte(words_[i])])
      sarcasm_ += PhraseAt(SarcasmCues()[c], words_, i, count);
  }
  for (std::string_view marker :
       {"/s", "\xF0\x9F\x99\x84" /* eye roll */, "\xF0\x9F\x98\x8F" /* smirk */}) {
    size_t at = original.find(marker);
    // "/s" only as a word of its own, not inside a URL path.
    if (at != std::string_view::npos &&
        (marker != "/s" || ((at + 2 == original.size() || original[at + 2] == ' ' ||
                             original[at + 2] == '\n') &&
                            (at == 0 || original[at - 1] == ' ')))) {
      ++sarcasm_;
    }
  }
}

Stance StanceReader::Of(const std::vector<ByteRange>& spans, const Rule& rule) const {
  const std::vector<std::string_view>& words = words_;
  const size_t n = words.size();

  // The matched words, and the window of evidence around them.
  int64_t first = -1, last = -1;
  for (size_t i = 0; i < n; ++i) {
    const ByteRange& o = word_origins_[i];
    for (const ByteRange& s : spans) {
      if (o.begin < s.end && s.begin < o.end) {
        if (first < 0) first = static_cast<int64_t>(i);
        last = static_cast<int64_t>(i);
        break;
      }
    }
  }
  if (first < 0) {
    first = 0;
    last = static_cast<int64_t>(n) - 1;
  }
  const int64_t lo = std::max<int64_t>(0, first - kStanceWindow);
  const int64_t hi = std::min<int64_t>(static_cast<int64_t>(n) - 1, last + kStanceWindow);

  // The rule's own words: cues among them are part of the claim, not about it.
  // (Read only when a one-word cue is found: most posts have none near the match.)
  std::unordered_set<std::string> own;
  bool own_read = false;
  auto is_own = [&](std::string_view word) {
    if (!own_read) {
      auto add_own = [&](std::string_view text) {
        for (std::string& w : WordsOf(text)) own.insert(std::move(w));
      };
      add_own(rule.claim);
      for (const std::string& s : rule.similar) add_own(s);
      for (const KeywordSet& k : rule.keywords) {
        for (const auto* terms : {&k.all, &k.any}) {
          for (const std::string& t : *terms) add_own(t);
        }
      }
      own_read = true;
    }
    return own.count(std::string(word)) > 0;
  };

  int refutations = 0, affirmations = 0;
  std::vector<bool> bound(n, false);  // negations that belong to a cue
  for (int64_t i = lo; i <= hi; ++i) {
    // (The cues in list order, those that can start with this word's first byte.)
    for (uint16_t c : RefutationCuesByByte()[FirstByte(words[i])]) {
      const Phrase& cue = RefutationCues()[c];
      if (!PhraseAt(cue, words, i, hi + 1)) continue;
      if (cue.size() == 1 && is_own(words[i])) continue;
      // A negation just before the cue turns it around: "not fake", "kein Fake".
      bool negated = false;
      for (int64_t j = std::max<int64_t>(lo, i - 3); j < i; ++j) {
        if (IsNegationAt(words, j)) {
          negated = true;
          bound[j] = true;
        }
      }
      // The cue's own negation ("not true", "stimmt nicht") is not another one.
      for (size_t k = 0; k < cue.size(); ++k) bound[i + k] = true;
      if (negated) {
        ++affirmations;
      } else {
        ++refutations;
      }
      break;
    }
  }

  // Negations next to or inside the matched words beyond those the claim itself
  // holds. Nearer than the cue window: a negation a few words off usually belongs
  // to another clause ("Birds aren't real and 5G spreads the virus").
  int window_negations = 0;
  const int64_t near_lo = std::max<int64_t>(0, first - kNegationReach);
  const int64_t near_hi =
      std::min<int64_t>(static_cast<int64_t>(n) - 1, last + kNegationReach);
  for (int64_t i = near_lo; i <= near_hi; ++i) {
    if (!bound[i] && IsNegationAt(words, i)) ++window_negations;
  }
  // (The claim's own are counted only if there are any near the match.)
  const bool negation_flip =
      window_negations > 0 && window_negations > CountNegations(WordsOf(rule.claim));

  bool fact_check_link = false;
  if (!post_.urls.empty()) {
    std::string review_host;
    if (std::string c = CanonicalizeUrl(rule.review.url); !c.empty()) {
      review_host = std::string(CanonicalHost(c));
    }
    for (const std::string& url : post_.urls) {
      fact_check_link = fact_check_link || IsFactCheckUrl(url, review_host);
    }
  }

  // A question mark or quotation marks around the matched words.
  const std::string_view original = original_;
  bool question = false, quoted = false;
  if (n > 0) {
    const ByteRange& window_begin = word_origins_[lo];
    const ByteRange& match_begin = word_origins_[first];
    const ByteRange& match_end = word_origins_[last];
    size_t after_end =
        hi + 1 < static_cast<int64_t>(n) ? word_origins_[hi + 1].begin : original.size();
    size_t before_begin = lo > 0 ? window_begin.begin : 0;
    // The question mark must close the matched sentence, not some later one.
    size_t next_word = last + 1 < static_cast<int64_t>(n) ? word_origins_[last + 1].begin
                                                          : original.size();
    question = original.substr(match_end.end, next_word - match_end.end).find('?') !=
               std::string_view::npos;
    quoted = HasQuote(original, before_begin, match_begin.begin) &&
             HasQuote(original, match_end.end, after_end);
  }

  if (sarcasm_ > 0) return Stance::kUnclear;
  const bool debunk = refutations > 0 || negation_flip || fact_check_link;
  if (debunk && affirmations > 0) return Stance::kUnclear;
  if (debunk) return Stance::kDebunks;
  if (affirmations > 0) return Stance::kRepeats;
  if (question || quoted) return Stance::kUnclear;
  return Stance::kRepeats;
}

Stance DetectStance(std::string_view original, const NormalizedText& post,
                    const std::vector<ByteRange>& spans, const Rule& rule) {
  return StanceReader(original, post).Of(spans, rule);
}

}  // namespace factlens
