// Copyright factlens authors.
//
// Atom extraction follows the idea of RE2's own prefilter (re2/prefilter.cc), on the
// parsed Regexp so that no program has to be compiled: for each node, either the
// exact, small set of strings it can match, or a set of strings one of which every
// match contains. RE2's Prefilter::FromRegexp is private and wants a compiled RE2;
// ours needs only the parse, which is what makes lazy compilation possible.
#include "factlens/prefilter.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <set>
#include <utility>

#include "re2/regexp.h"
#include "util/utf.h"

namespace factlens {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr size_t kMaxExact = 16;       // strings in an exact set
constexpr size_t kMaxExactBytes = 64;  // length of one exact string
constexpr int kMaxClassRunes = 4;      // small classes enumerate their runes

char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

std::string RuneUtf8(re2::Rune r) {
  char buf[re2::UTFmax];
  int n = re2::runetochar(buf, &r);
  std::string s(buf, n);
  for (char& c : s) c = LowerAscii(c);
  return s;
}

struct Info {
  enum Kind { kExact, kRequired, kNothing } kind = kNothing;
  std::set<std::string> strs;

  static Info Exact(std::set<std::string> s) {
    Info i;
    i.kind = kExact;
    i.strs = std::move(s);
    return i;
  }
  static Info Nothing() { return Info(); }
};

// Returns `info` as a required set (any match contains one of its strings); an
// empty string among them means "no guarantee".
Info AsRequired(Info info) {
  if (info.kind == Info::kNothing) return info;
  if (info.strs.empty() || info.strs.count("") > 0) return Info::Nothing();
  info.kind = Info::kRequired;
  return info;
}

// Orders guarantees: a longer shortest atom filters better, then fewer atoms.
bool Better(const Info& a, const Info& b) {
  if (b.kind == Info::kNothing) return a.kind != Info::kNothing;
  if (a.kind == Info::kNothing) return false;
  auto shortest = [](const Info& i) {
    size_t m = SIZE_MAX;
    for (const std::string& s : i.strs) m = std::min(m, s.size());
    return m;
  };
  size_t sa = std::min<size_t>(shortest(a), 8), sb = std::min<size_t>(shortest(b), 8);
  if (sa != sb) return sa > sb;
  return a.strs.size() < b.strs.size();
}

Info Walk(re2::Regexp* re, int depth);

Info Concat(re2::Regexp** subs, int n, int depth, std::vector<Info>* pieces = nullptr) {
  Info best;  // the best required set seen among finished pieces
  Info run = Info::Exact({""});
  bool all_exact = true;
  auto retire = [&](Info piece) {
    piece = AsRequired(std::move(piece));
    if (pieces != nullptr && piece.kind == Info::kRequired) pieces->push_back(piece);
    if (Better(piece, best)) best = std::move(piece);
  };
  for (int i = 0; i < n; ++i) {
    Info sub = Walk(subs[i], depth + 1);
    if (sub.kind == Info::kExact && run.kind == Info::kExact &&
        run.strs.size() * sub.strs.size() <= kMaxExact) {
      std::set<std::string> cross;
      bool too_long = false;
      for (const std::string& a : run.strs) {
        for (const std::string& b : sub.strs) {
          if (a.size() + b.size() > kMaxExactBytes) too_long = true;
          cross.insert(a + b);
        }
      }
      if (!too_long) {
        run.strs = std::move(cross);
        continue;
      }
    }
    all_exact = false;
    retire(std::move(run));
    if (sub.kind == Info::kExact) {
      run = std::move(sub);  // may grow with what follows
    } else {
      retire(std::move(sub));
      run = Info::Exact({""});
    }
  }
  if (all_exact) return run;
  retire(std::move(run));
  return best;
}

Info Walk(re2::Regexp* re, int depth) {
  if (depth > 200) return Info::Nothing();  // parse depth is bounded; be safe anyway
  switch (re->op()) {
    case re2::kRegexpEmptyMatch:
    case re2::kRegexpBeginLine:
    case re2::kRegexpEndLine:
    case re2::kRegexpBeginText:
    case re2::kRegexpEndText:
    case re2::kRegexpWordBoundary:
    case re2::kRegexpNoWordBoundary:
      return Info::Exact({""});
    case re2::kRegexpLiteral:
      // A non-ASCII literal still marked for case folding could match another
      // case form we would not list: give no guarantee rather than a wrong one.
      if (re->rune() >= 0x80 && (re->parse_flags() & re2::Regexp::FoldCase)) {
        return Info::Nothing();
      }
      return Info::Exact({RuneUtf8(re->rune())});
    case re2::kRegexpLiteralString: {
      if (re->parse_flags() & re2::Regexp::FoldCase) {
        for (int i = 0; i < re->nrunes(); ++i) {
          if (re->runes()[i] >= 0x80) return Info::Nothing();
        }
      }
      std::string s;
      for (int i = 0; i < re->nrunes(); ++i) s += RuneUtf8(re->runes()[i]);
      if (s.size() > kMaxExactBytes) return AsRequired(Info::Exact({s}));
      return Info::Exact({s});
    }
    case re2::kRegexpConcat:
      return Concat(re->sub(), re->nsub(), depth);
    case re2::kRegexpAlternate: {
      std::vector<Info> subs;
      bool all_exact = true;
      size_t total = 0;
      for (int i = 0; i < re->nsub(); ++i) {
        subs.push_back(Walk(re->sub()[i], depth + 1));
        if (subs.back().kind != Info::kExact) all_exact = false;
        total += subs.back().strs.size();
      }
      Info out;
      if (all_exact && total <= kMaxExact) {
        out.kind = Info::kExact;
      } else {
        out.kind = Info::kRequired;
        for (Info& s : subs) {
          s = AsRequired(std::move(s));
          if (s.kind == Info::kNothing) return Info::Nothing();
        }
      }
      for (Info& s : subs) out.strs.insert(s.strs.begin(), s.strs.end());
      return out;
    }
    case re2::kRegexpQuest: {
      Info sub = Walk(re->sub()[0], depth + 1);
      if (sub.kind != Info::kExact || sub.strs.size() >= kMaxExact)
        return Info::Nothing();
      sub.strs.insert("");
      return sub;
    }
    case re2::kRegexpPlus:
      return AsRequired(Walk(re->sub()[0], depth + 1));
    case re2::kRegexpRepeat:
      if (re->min() == 0) return Info::Nothing();
      return AsRequired(Walk(re->sub()[0], depth + 1));
    case re2::kRegexpCapture:
      return Walk(re->sub()[0], depth + 1);
    case re2::kRegexpCharClass: {
      re2::CharClass* cc = re->cc();
      if (cc->size() > kMaxClassRunes) return Info::Nothing();
      std::set<std::string> runes;
      for (re2::RuneRange r : *cc) {
        for (re2::Rune c = r.lo; c <= r.hi; ++c) runes.insert(RuneUtf8(c));
      }
      return Info::Exact(std::move(runes));
    }
    default:  // star, any char, any byte, no match, have match
      return Info::Nothing();
  }
}

int64_t SatAdd(int64_t a, int64_t b) {
  constexpr int64_t kCap = INT64_MAX / 4;
  return (a > kCap - b) ? kCap : a + b;
}
int64_t SatMul(int64_t a, int64_t b) {
  constexpr int64_t kCap = INT64_MAX / 4;
  if (a == 0 || b == 0) return 0;
  return (a > kCap / b) ? kCap : a * b;
}

int64_t Estimate(re2::Regexp* re, int depth) {
  if (depth > 1000) return INT64_MAX / 4;
  // Per-node upper bounds on RE2's instructions: a UTF-8 rune is at most 4 byte
  // ranges; one rune range of a class splits into a bounded number of UTF-8
  // sequences (at most 4 lengths x a few continuation splits), bounded by 32.
  switch (re->op()) {
    case re2::kRegexpLiteral:
      return 8;
    case re2::kRegexpLiteralString:
      return SatMul(8, re->nrunes());
    case re2::kRegexpCharClass: {
      int64_t ranges = 0;
      for (re2::RuneRange r : *re->cc()) {
        (void)r;
        ++ranges;
      }
      return SatAdd(SatMul(ranges, 32), 4);
    }
    case re2::kRegexpAnyChar:
      return 32;
    case re2::kRegexpConcat:
    case re2::kRegexpAlternate: {
      int64_t sum = re->nsub();
      for (int i = 0; i < re->nsub(); ++i)
        sum = SatAdd(sum, Estimate(re->sub()[i], depth + 1));
      return sum;
    }
    case re2::kRegexpStar:
    case re2::kRegexpPlus:
    case re2::kRegexpQuest:
    case re2::kRegexpCapture:
      return SatAdd(Estimate(re->sub()[0], depth + 1), 4);
    case re2::kRegexpRepeat: {
      int64_t copies = std::max(re->min(), re->max()) + 1;
      return SatAdd(SatMul(Estimate(re->sub()[0], depth + 1) + 2, copies), 4);
    }
    default:
      return 2;
  }
}

}  // namespace

RegexpAtoms ExtractAtoms(re2::Regexp* re, size_t min_atom_bytes) {
  while (re->op() == re2::kRegexpCapture) re = re->sub()[0];
  // A top-level concatenation guarantees each of its pieces: keep the best few,
  // so that a post must hold an atom of every one (AND of ORs).
  std::vector<Info> pieces;
  Info info = re->op() == re2::kRegexpConcat ? Concat(re->sub(), re->nsub(), 0, &pieces)
                                             : Walk(re, 0);
  info = AsRequired(std::move(info));
  if (pieces.empty() && info.kind == Info::kRequired) pieces.push_back(info);
  auto usable = [&](const Info& i) {
    if (i.kind != Info::kRequired) return false;
    for (const std::string& s : i.strs) {
      if (s.size() < min_atom_bytes) return false;
    }
    return true;
  };
  pieces.erase(std::remove_if(pieces.begin(), pieces.end(),
                              [&](const Info& i) { return !usable(i); }),
               pieces.end());
  std::stable_sort(pieces.begin(), pieces.end(), Better);
  RegexpAtoms out;
  for (const Info& i : pieces) {
    if (out.groups.size() == Prefilter::kMaxGroups) break;
    out.groups.emplace_back(i.strs.begin(), i.strs.end());
  }
  out.usable = !out.groups.empty();
  return out;
}

int64_t EstimateProgramSize(re2::Regexp* re) { return Estimate(re, 0); }

// ------------------------------------------------------------------ automaton --

void Prefilter::AddItem(uint32_t item,
                        const std::vector<std::vector<std::string>>& groups) {
  // An empty atom is in every text, an empty group in none: either way the item
  // must simply always be checked.
  size_t used = std::min(groups.size(), kMaxGroups);
  bool degenerate = used == 0;
  for (size_t g = 0; g < used; ++g) {
    if (groups[g].empty()) degenerate = true;
    for (const std::string& a : groups[g]) degenerate |= a.empty();
  }
  if (degenerate) {
    AddAlwaysItem(item);
    return;
  }
  if (item_groups_.size() <= item) item_groups_.resize(item + 1, 0);
  item_groups_[item] = static_cast<uint8_t>(used);
  for (size_t g = 0; g < used; ++g) {
    for (const std::string& a : groups[g]) {
      std::string lower = a;
      for (char& c : lower) c = LowerAscii(c);
      pending_.emplace_back(std::move(lower),
                            item * kMaxGroups + static_cast<uint32_t>(g));
    }
  }
}

void Prefilter::AddAlwaysItem(uint32_t item) { always_.push_back(item); }

void Prefilter::Build(uint32_t item_count) {
  item_count_ = item_count;
  item_groups_.resize(item_count, 0);
  std::sort(pending_.begin(), pending_.end());
  pending_.erase(std::unique(pending_.begin(), pending_.end()), pending_.end());
  std::sort(always_.begin(), always_.end());
  always_.erase(std::unique(always_.begin(), always_.end()), always_.end());

  // Distinct atoms in sorted order, and their items.
  std::vector<std::string_view> atoms;
  atom_item_begin_.clear();
  atom_items_.clear();
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (atoms.empty() || atoms.back() != pending_[i].first) {
      atoms.push_back(pending_[i].first);
      atom_item_begin_.push_back(static_cast<uint32_t>(atom_items_.size()));
    }
    atom_items_.push_back(pending_[i].second);
  }
  atom_item_begin_.push_back(static_cast<uint32_t>(atom_items_.size()));

  // The trie, built from the sorted atoms: a node's children are created in byte
  // order. Nodes get depth-first ids here and are renumbered breadth-first below.
  struct Edge {
    uint32_t from;
    uint8_t byte;
    uint32_t to;
  };
  std::vector<Edge> edges;
  std::vector<uint32_t> term(1, kNone), depth(1, 0);
  std::vector<uint32_t> path;  // node at each depth along the previous atom
  std::string_view prev;
  for (uint32_t a = 0; a < atoms.size(); ++a) {
    std::string_view s = atoms[a];
    size_t common = 0;
    while (common < s.size() && common < prev.size() && s[common] == prev[common])
      ++common;
    path.resize(common + 1);
    path[0] = 0;
    for (size_t k = common; k < s.size(); ++k) {
      uint32_t node = static_cast<uint32_t>(term.size());
      term.push_back(kNone);
      depth.push_back(static_cast<uint32_t>(k + 1));
      edges.push_back({path[k], static_cast<uint8_t>(s[k]), node});
      path.push_back(node);
    }
    term[path[s.size()]] = a;
    prev = s;
  }
  const uint32_t n = static_cast<uint32_t>(term.size());

  // Breadth-first numbering: stable sort of nodes by depth keeps siblings in byte
  // order and parents before children.
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return depth[x] < depth[y]; });
  std::vector<uint32_t> id(n);
  for (uint32_t i = 0; i < n; ++i) id[order[i]] = i;

  edge_begin_.assign(n + 1, 0);
  for (const Edge& e : edges) ++edge_begin_[id[e.from] + 1];
  for (uint32_t i = 0; i < n; ++i) edge_begin_[i + 1] += edge_begin_[i];
  edge_byte_.assign(edges.size(), 0);
  edge_next_.assign(edges.size(), 0);
  {
    std::vector<uint32_t> fill(edge_begin_.begin(), edge_begin_.end() - 1);
    // Edges were created in sorted-atom order, so each node's edges arrive in
    // increasing byte order.
    for (const Edge& e : edges) {
      uint32_t at = fill[id[e.from]]++;
      edge_byte_[at] = e.byte;
      edge_next_[at] = id[e.to];
    }
  }
  atom_at_.assign(n, kNone);
  for (uint32_t i = 0; i < n; ++i) atom_at_[id[i]] = term[i];

  // Failure and dictionary links, in breadth-first order (parents first).
  fail_.assign(n, 0);
  dict_.assign(n, kNone);
  FillRootRow();
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t e = edge_begin_[s]; e < edge_begin_[s + 1]; ++e) {
      uint32_t child = edge_next_[e];
      uint8_t c = edge_byte_[e];
      uint32_t f = 0;
      if (s != 0) {
        uint32_t t = fail_[s];
        for (;;) {
          if (t == 0) {
            f = root_next_[c];
            break;
          }
          uint32_t lo = edge_begin_[t], hi = edge_begin_[t + 1];
          uint32_t found = kNone;
          for (uint32_t k = lo; k < hi; ++k) {
            if (edge_byte_[k] == c) {
              found = edge_next_[k];
              break;
            }
          }
          if (found != kNone) {
            f = found;
            break;
          }
          t = fail_[t];
        }
      }
      fail_[child] = f;
      dict_[child] = atom_at_[f] != kNone ? f : dict_[f];
    }
  }
  pending_.clear();
  pending_.shrink_to_fit();
  Pack();
}

void Prefilter::Pack() {
  const size_t n = fail_.size();
  states_.resize(n);
  for (size_t s = 0; s < n; ++s) {
    const uint32_t count = edge_begin_[s + 1] - edge_begin_[s];
    State& state = states_[s];
    state.fail = fail_[s];
    state.output = atom_at_[s] != kNone || dict_[s] != kNone;
    if (count == 1) {
      state.edges = edge_next_[edge_begin_[s]];
      state.byte = edge_byte_[edge_begin_[s]];
      state.edge_count = 1;
    } else {
      // A state has at most 256 edges (one per byte).
      state.edges = edge_begin_[s];
      state.byte = 0;
      state.edge_count = static_cast<uint16_t>(count);
    }
  }
  edges_.resize(edge_next_.size());
  for (size_t e = 0; e < edges_.size(); ++e) edges_[e] = {edge_next_[e], edge_byte_[e]};
  // (Single edges stay in edges_ too: Serialize reads the edges from there.)
  for (auto* v : {&edge_begin_, &edge_next_, &fail_}) std::vector<uint32_t>().swap(*v);
  std::vector<uint8_t>().swap(edge_byte_);
}

void Prefilter::FillRootRow() {
  std::memset(root_next_, 0, sizeof(root_next_));
  if (edge_begin_.size() < 2) return;
  for (uint32_t e = edge_begin_[0]; e < edge_begin_[1]; ++e) {
    root_next_[edge_byte_[e]] = edge_next_[e];
  }
}

std::vector<uint32_t> Prefilter::Candidates(std::string_view text) const {
  std::vector<uint32_t> out(always_);
  const size_t atoms = atom_count();
  if (atoms == 0) return out;
  if (atom_seen_.size() != atoms) atom_seen_.assign(atoms, 0);
  if (item_seen_.size() != item_count_) {
    item_seen_.assign(item_count_, 0);
    item_mask_.assign(item_count_, 0);
  }
  if (++epoch_ == 0) {  // wrapped: forget every stamp
    std::fill(atom_seen_.begin(), atom_seen_.end(), 0);
    std::fill(item_seen_.begin(), item_seen_.end(), 0);
    epoch_ = 1;
  }
  for (uint32_t i : always_) item_seen_[i] = epoch_;
  const State* states = states_.data();
  const Edge* edges = edges_.data();
  uint32_t s = 0;
  for (unsigned char raw : text) {
    const uint8_t c = static_cast<uint8_t>(LowerAscii(static_cast<char>(raw)));
    for (;;) {
      if (s == 0) {
        s = root_next_[c];
        break;
      }
      const State& state = states[s];
      uint32_t next = kNone;
      if (state.edge_count == 1) {
        if (state.byte == c) next = state.edges;
      } else {
        for (uint32_t k = state.edges; k < state.edges + state.edge_count; ++k) {
          if (edges[k].byte == c) {
            next = edges[k].next;
            break;
          }
        }
      }
      if (next != kNone) {
        s = next;
        break;
      }
      s = state.fail;
    }
    if (!states[s].output) continue;
    for (uint32_t t = atom_at_[s] != kNone ? s : dict_[s]; t != kNone; t = dict_[t]) {
      uint32_t a = atom_at_[t];
      if (atom_seen_[a] == epoch_) break;  // this atom and its suffixes were handled
      atom_seen_[a] = epoch_;
      for (uint32_t k = atom_item_begin_[a]; k < atom_item_begin_[a + 1]; ++k) {
        const uint32_t item = atom_items_[k] / kMaxGroups;
        const uint8_t bit = static_cast<uint8_t>(1u << (atom_items_[k] % kMaxGroups));
        if (item_seen_[item] != epoch_) {
          item_seen_[item] = epoch_;
          item_mask_[item] = 0;
        }
        const uint8_t full = static_cast<uint8_t>((1u << item_groups_[item]) - 1);
        if (item_mask_[item] == full) continue;  // already a candidate
        item_mask_[item] |= bit;
        if (item_mask_[item] == full) out.push_back(item);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Prefilter::Serialize(ByteWriter* w) const {
  std::vector<uint32_t> edge_begin, edge_next, fail;
  std::vector<uint8_t> edge_byte;
  uint32_t next_edge = 0;
  for (const State& s : states_) {
    edge_begin.push_back(next_edge);
    next_edge += s.edge_count;
    fail.push_back(s.fail);
  }
  edge_begin.push_back(static_cast<uint32_t>(edges_.size()));
  for (const Edge& e : edges_) {
    edge_next.push_back(e.next);
    edge_byte.push_back(e.byte);
  }
  w->U32(item_count_);
  w->Vec(edge_begin);
  w->Vec(edge_byte);
  w->Vec(edge_next);
  w->Vec(fail);
  w->Vec(atom_at_);
  w->Vec(dict_);
  w->Vec(atom_item_begin_);
  w->Vec(atom_items_);
  w->Vec(item_groups_);
  w->Vec(always_);
}

bool Prefilter::Deserialize(ByteReader* r) {
  item_count_ = r->U32();
  if (!r->Vec(&edge_begin_) || !r->Vec(&edge_byte_) || !r->Vec(&edge_next_) ||
      !r->Vec(&fail_) || !r->Vec(&atom_at_) || !r->Vec(&dict_) ||
      !r->Vec(&atom_item_begin_) || !r->Vec(&atom_items_) || !r->Vec(&item_groups_) ||
      !r->Vec(&always_)) {
    return false;
  }
  if (!Validate()) return false;
  FillRootRow();
  Pack();
  atom_seen_.clear();
  item_seen_.clear();
  epoch_ = 0;
  return true;
}

bool Prefilter::Validate() const {
  const size_t n = fail_.size();
  if (n == 0 || edge_begin_.size() != n + 1 || atom_at_.size() != n || dict_.size() != n)
    return false;
  if (edge_byte_.size() != edge_next_.size() || edge_begin_[0] != 0 ||
      edge_begin_[n] != edge_next_.size())
    return false;
  for (size_t i = 0; i < n; ++i) {
    if (edge_begin_[i] > edge_begin_[i + 1]) return false;
  }
  for (uint32_t t : edge_next_) {
    if (t == 0 || t >= n) return false;
  }
  if (atom_item_begin_.empty() || atom_item_begin_[0] != 0 ||
      atom_item_begin_.back() != atom_items_.size())
    return false;
  const size_t atoms = atom_item_begin_.size() - 1;
  for (size_t a = 0; a < atoms; ++a) {
    if (atom_item_begin_[a] > atom_item_begin_[a + 1]) return false;
  }
  if (item_groups_.size() != item_count_) return false;
  for (uint8_t g : item_groups_) {
    if (g > kMaxGroups) return false;
  }
  for (uint32_t v : atom_items_) {
    const uint32_t item = v / kMaxGroups;
    if (item >= item_count_ || v % kMaxGroups >= item_groups_[item]) return false;
  }
  for (uint32_t item : always_) {
    if (item >= item_count_) return false;
  }
  // Failure links must point to shallower (earlier, breadth-first) states, so the
  // scan's failure walk always ends at the root; dictionary links likewise.
  for (size_t s = 1; s < n; ++s) {
    if (fail_[s] >= s) return false;
    if (dict_[s] != kNone && (dict_[s] >= s || atom_at_[dict_[s]] == kNone)) return false;
    if (atom_at_[s] != kNone && atom_at_[s] >= atoms) return false;
  }
  if (fail_[0] != 0 || dict_[0] != kNone || atom_at_[0] != kNone) return false;
  return true;
}

}  // namespace factlens
