// Copyright factlens authors. prefilter: which rules could match a post, found in one
// pass over its normalised text.
//
// Every matcher item (a pattern, a keyword set, ...) names a set of "atoms": strings
// of which at least one occurs in any post the item matches. Most atoms can only
// count where a word starts (a keyword's words; a pattern's atom after \b, ^ or
// \W+): those are found by walking a trie of them from each such place, a few
// bytes each, independent of each other. The rest are found by one Aho-Corasick
// automaton over the whole text, one step a byte, each waiting on the last. Either
// way the cost per post grows with the post and the atoms it holds, not with the
// number of rules. Items without a usable atom are "always checked"; an item is
// never dropped. Matching is ASCII case-insensitive (atoms are stored lower-case and
// text bytes are lower-cased as they are scanned), which only ever widens the set of
// candidates.
#ifndef FACTLENS_PREFILTER_H_
#define FACTLENS_PREFILTER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "factlens/binary.h"

namespace re2 {
class Regexp;
class RegexpStatus;
}  // namespace re2

namespace factlens {

// What a parsed regexp guarantees about its matches.
struct RegexpAtoms {
  // True if every match contains, for each group of `groups`, one of its atoms
  // (ASCII lower-cased); false if no usable guarantee was found (the pattern must
  // be always checked). At most kMaxGroups groups, strongest first.
  bool usable = false;
  std::vector<std::vector<std::string>> groups;
  // Per atom of `groups`: true if it is word-anchored (Prefilter::AddItem): the
  // pattern puts a \b before it (and it starts with a word byte), or ^, or a
  // piece whose matches all end with a byte that is not a word byte.
  std::vector<std::vector<bool>> word_start;
};

// Returns the atoms of `re` (parsed with RE2's flags for the options it will be
// compiled with). Atoms shorter than `min_atom_bytes` make the set unusable.
RegexpAtoms ExtractAtoms(re2::Regexp* re, size_t min_atom_bytes = 2);

// Returns an upper bound on the number of instructions RE2 compiles `re` into
// (saturating at INT64_MAX / 4). Lets a loader skip compiling small patterns up
// front while still compiling, and so checking, every pattern that could exceed
// RE2's memory budget.
int64_t EstimateProgramSize(re2::Regexp* re);

// Returns the most bytes one match of `re` can span, or -1 if there is no bound (a
// star, a plus or an open-ended repeat of something that consumes input). Each
// literal, class or any-character counts its longest UTF-8 form, and a letter under
// case folding 4 bytes (its other forms may be longer: k and U+212A KELVIN SIGN).
// With ExtractAtoms' guarantee, it bounds where in a text a match can lie: within
// this many bytes of an atom's occurrence (CompiledList::Match searches only there).
int64_t MaxMatchBytes(re2::Regexp* re);

// For ParseForAtoms, on a tree parsed without case folding: true if folding could
// not change its atoms on a normalised post (ASCII literals and classes, a negated
// class's tail, no (?i)); and an upper bound on EstimateProgramSize of the same
// pattern parsed with folding (for a tree FoldFree accepts).
bool FoldFree(re2::Regexp* re);
int64_t FoldedEstimateBound(re2::Regexp* re);

// Parses a normalised pattern for ExtractAtoms, as RE2 will with parse `flags`
// (case folding included), and says whether EstimateProgramSize of that parse is
// above `large_instructions` (*large). Returns null with *status on a syntax error;
// the caller Decrefs the tree.
// Most patterns are parsed without case folding, which is 4 times faster (RE2 makes
// and drops a character class for every letter it folds); one with a byte outside
// ASCII is parsed with folding only. That tree gives the same
// guarantee when the pattern holds only ASCII literals and classes and no (?i): the
// scan lower-cases ASCII, and the other case forms of ASCII letters (U+212A KELVIN
// SIGN for k, U+017F LONG S for s) never survive normalisation (prefilter_test
// checks every code point). Its atoms then lack those two letters' forms, which no
// post can hold. *large is decided from a bound on the folded parse's estimate
// (with a margin: the fast path is for patterns below half `large_instructions`).
// *plain_rejected (if given) is set if the parse without folding was tried and
// failed.
re2::Regexp* ParseForAtoms(std::string_view pattern, int flags,
                           int64_t large_instructions, bool* large,
                           re2::RegexpStatus* status, bool* plain_rejected = nullptr);

// Returns the end of the run of ASCII letters and digits in `text` from byte `i`
// (`i` itself if that byte is neither, or i >= text.size()): where a word-anchored
// atom can next start (Prefilter::Candidates).
size_t AsciiAlnumRunEnd(std::string_view text, size_t i);

// Collects atoms and the items they trigger, then builds the automaton.
// Not copyable (it may be large); movable.
class Prefilter {
 public:
  Prefilter() = default;
  Prefilter(Prefilter&&) = default;
  Prefilter& operator=(Prefilter&&) = default;
  Prefilter(const Prefilter&) = delete;
  Prefilter& operator=(const Prefilter&) = delete;

  static constexpr size_t kMaxGroups = 4;

  // Registers item `item`: it is a candidate for any post holding, for every
  // group of `groups` (at most kMaxGroups are used), one atom of that group.
  // An empty group or atom makes the item always checked. Must be called before
  // Build(). `word_start` (the shape of `groups`, or shorter) marks the atoms that
  // are word-anchored: an occurrence counts only at the start of the text or
  // after a byte that is not an ASCII letter or digit (a keyword's word, an atom
  // after \b).
  void AddItem(uint32_t item, const std::vector<std::vector<std::string>>& groups,
               const std::vector<std::vector<bool>>& word_start = {});
  // AddItem with every atom word-anchored.
  void AddWordItem(uint32_t item, const std::vector<std::vector<std::string>>& groups);
  // Registers `item` as a candidate for every post. Must be called before Build().
  void AddAlwaysItem(uint32_t item);
  // Builds the automaton from the registered items; AddItem/AddAlwaysItem after
  // this are not allowed. `item_count` bounds the item ids (ids < item_count).
  void Build(uint32_t item_count);

  // Returns the sorted, distinct items that are candidates for `text`.
  // Requires Build() (or Deserialize). Reuses internal scratch space, so it is not
  // safe to call concurrently on one Prefilter.
  // `extra_word_starts` (sorted or not) are positions where word-anchored atoms
  // count too, though the byte before is a letter or digit: where a character the
  // caller folded to one stood (see FoldAsciiFoldOutsiders in match.cc).
  std::vector<uint32_t> Candidates(
      std::string_view text, const std::vector<uint32_t>& extra_word_starts = {}) const;

  // Makes the first `states` states of the scan's automaton and of the
  // word-anchored atoms' trie (breadth-first: the shallowest) dense, at most as
  // many as fit kDenseBytes each (Build and Deserialize make them so); 0 scans
  // and walks with the sparse records alone. The candidates are the same either
  // way: for tests and benchmarks.
  void SetDenseStates(size_t states);
  size_t dense_states() const { return dense_.count; }
  size_t word_dense_states() const { return word_dense_.count; }
  static constexpr size_t kDenseBytes = size_t{256} << 10;

  uint32_t item_count() const { return item_count_; }
  size_t atom_count() const { return atom_count_; }
  size_t state_count() const { return state_count_; }  // the scan's automaton
  size_t word_state_count() const { return word_state_count_; }
  size_t always_count() const { return always_.size(); }
  // The items named by atoms' keys, all atoms together (an item of several
  // groups by its lead group's atoms alone); an atom no key of which names an
  // item counts one. For tests and benchmarks.
  size_t key_count() const { return atom_items_.size(); }

  // Appends the built automaton to `w`; Deserialize reads it back. Deserialize
  // returns false (and leaves *this unusable) if the bytes are malformed: every
  // index is checked, so hostile bytes cannot make Candidates() read out of range.
  void Serialize(ByteWriter* w) const;
  bool Deserialize(ByteReader* r);

 private:
  // Both AddItems: word_start(g, k) says if atom k of group g is word-anchored.
  template <typename WordStart>
  void AddItem(uint32_t item, const std::vector<std::vector<std::string>>& groups,
               const WordStart& word_start);
  bool Validate();
  // Validate's check of one trie's records (`nodes`, with `atom_starts` the bits
  // of atoms' first keys); returns its state count, 0 if malformed.
  uint32_t ValidateTrie(const std::vector<uint32_t>& nodes,
                        const std::vector<uint64_t>& atom_starts) const;
  void FillRootRow();
  // Build's making of one trie from the `atom_count` `atoms` (sorted, distinct)
  // whose first keys are `atom_item_begin`, into *nodes, with failure and
  // dictionary links if `links`; appends tails to tails_. Returns its state count.
  uint32_t BuildTrie(const std::string_view* atoms, const uint32_t* atom_item_begin,
                     size_t atom_count, bool links, std::vector<uint32_t>* nodes);

  // Build-time input: (atom, item * kMaxGroups + group), the atoms' bytes in one
  // string: Build sorts small records, not strings.
  struct Pending {
    // The atom's first 8 bytes, big-endian, zero-padded: sorting compares these
    // integers, and the text (a cache miss and a memcmp each) only on a tie.
    uint64_t head;
    uint32_t begin, size;  // in pending_text_
    uint32_t key;          // item * kMaxGroups + group
    bool word;             // word-anchored
  };
  std::vector<Pending> pending_;
  std::string pending_text_;

  // The automaton, as the scan reads it and as the compiled form stores it (import
  // is a copy and a check, not a rebuild). States are numbered in breadth-first
  // order, root 0. Each atom is cut after the byte that sets it apart from every
  // other atom of the list, or after kMinCut bytes if that is later (prefilter.cc:
  // a shorter prefix is in posts too often); the rest, its "tail", is compared with
  // the text that follows when the scan reaches the cut. Atoms are mostly words and
  // phrases sharing few prefixes, so a trie of whole atoms is mostly single-edge chains
  // (1.9M states for the atoms of 100k rules, against 0.3M with tails), and the
  // candidates are exactly those of the whole-atom automaton.
  // A state is a record in `nodes_` (32-bit words), named by its offset; the
  // root is at 0. What one step needs of a state, its edges and atoms included, is
  // in one place (a scan over a large list is bound by memory latency):
  //   [0] fail: the failure state
  //   [1] head: edge count (bits 0-7); for one edge, its byte (bits 8-15);
  //       kOutputBit, kTailBit
  //   [2] one edge: the next state; k >= 2 edges: their bytes, ascending, in
  //       ceil(k / 8) 8-byte groups (the last padded with copies of the last
  //       byte), then k words: the next states
  //   then, with kOutputBit: the atom whose cut ends here (or kNone), the nearest
  //   proper suffix state with an atom (its dictionary link, or kNone); with
  //   kTailBit: the atom's tail, tails_[begin, +size): begin, size.
  // The edges are at a fixed place, so a step loads them with the head, not after
  // it; a step compares the byte with 8 edge bytes at a time, without branching
  // on each; a leaf without atoms takes 2 words.
  static constexpr uint32_t kFail = 0, kHead = 1, kEdges = 2;
  static constexpr uint32_t kAtom = 0, kDict = 1, kTailBegin = 2, kTailSize = 3;
  static constexpr uint32_t kOutputBit = 1u << 16, kTailBit = 1u << 17;
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // Offset of the atom fields in a record, and the words of a record, with head
  // `head`.
  static uint32_t OutputAt(uint32_t head) {
    const uint32_t edges = head & 0xFF;
    return kEdges + (edges == 0 ? 0 : edges == 1 ? 1 : (edges + 7) / 8 * 2 + edges);
  }
  static uint32_t RecordWords(uint32_t head) {
    return OutputAt(head) + (head >> 16 & 1) * 2 + (head >> 17 & 1) * 2;
  }
  // Calls f(byte, next state) for each edge of the record at `at` of `nodes`, in
  // byte order (the derived tables' reading of a record; the scan has its own).
  template <typename F>
  static void ForEachEdge(const std::vector<uint32_t>& nodes, uint32_t at, F&& f) {
    const uint32_t head = nodes[at + kHead];
    const uint32_t count = head & 0xFF;
    const uint32_t* edges = &nodes[at + kEdges];
    if (count == 1) {
      f(static_cast<uint8_t>(head >> 8 & 0xFF), edges[0]);
    } else if (count > 1) {
      const uint8_t* bytes = reinterpret_cast<const uint8_t*>(edges);
      const uint32_t* next = edges + (count + 7) / 8 * 2;
      for (uint32_t k = 0; k < count; ++k) f(bytes[k], next[k]);
    }
  }
  std::vector<uint32_t> nodes_;
  uint32_t state_count_ = 0;  // records in nodes_ (derived)
  // The word-anchored atoms' trie, in the same records (with no failure or
  // dictionary links: all lead to the root, or nowhere): walked from each
  // place a word can start, as far as the text follows its edges. A post's words
  // fall off the trie within a few bytes, and each walk is independent of the
  // last, where the scan's steps wait on each other byte after byte.
  std::vector<uint32_t> word_nodes_;
  uint32_t word_state_count_ = 0;      // (derived)
  uint32_t word_root_next_[256] = {};  // the root's edges (derived)
  // Derived from the records (not stored): the shallowest states of a trie as a
  // DFA, where a sparse step's edge search (and the scan's failure walk after it)
  // cost most (most of a post's bytes are read in states a few bytes deep). A
  // byte's class (byte_class: 0 for a byte on no dense state's edge; a capital
  // its small letter's) indexes a dense state's row of `entries`. States at offsets below
  // `end` are dense, their row at entries[row[offset]], and the row at r is the
  // state at node[r / class_count]. An entry is the state the byte leads to (the
  // scan's failure links followed): the offset of its row if it is dense and has
  // no atoms, else kDenseExit | its offset; 0 is the root's row (the scan's) or
  // no state (the walk's: no edge leads to the root). So a step through dense
  // states is one load that the next waits on, not two (the row of the state,
  // then the entry). With the word trie's rows, Candidates natively 97.5k ->
  // 77.2k instructions a check at 10k rules (wasm/README).
  struct DenseRows {
    uint8_t byte_class[256] = {};
    uint32_t class_count = 1;
    std::vector<uint32_t> entries;
    std::vector<uint32_t> row;   // by offset below end
    std::vector<uint32_t> node;  // by row
    uint32_t end = 0;
    size_t count = 0;
  };
  static constexpr uint32_t kDenseExit = 1u << 31;
  // Makes the first `states` records of `nodes` (`record_count` of them) dense
  // in *d, as many as fit kDenseBytes; `failure_links`: the scan's automaton (an
  // entry follows them), else the walk's trie (a byte on no edge leads nowhere).
  static void MakeDense(const std::vector<uint32_t>& nodes, uint32_t record_count,
                        bool failure_links, size_t states, DenseRows* d);
  DenseRows dense_;       // the scan's automaton
  DenseRows word_dense_;  // the word-anchored atoms' trie
  // The scan's run of steps through the dense states (prefilter.cc).
  static size_t DenseSteps(const uint32_t* dense, const uint8_t* byte_class,
                           const uint8_t* text, size_t n, size_t i, uint32_t row,
                           uint32_t* entry);
  std::string tails_;
  uint32_t root_next_[256] = {};
  // An atom is named by its first key in atom_items_ (the record of the state
  // where its cut ends holds that index). Its keys run up to the one with
  // kLastKey; a key's kind (bits 0-3) says what seeing the atom does with its
  // value (bits 4-30):
  //   kOneGroup: item `value`, of one group, is a candidate;
  //   kLeadGroup: the item whose record is at item_rest_[value] has its lead
  //     group satisfied: after the scan, it is a candidate if its other groups'
  //     atoms were seen too;
  //   kNoItems: nothing (an atom only other groups name has this one key).
  // An item of several groups has keys for its lead group's atoms alone: the
  // group whose atoms name the fewest items (Build), so a common atom triggers
  // few items. Keyed by every group, a bench post at 100k rules walked 1,400 keys
  // of two-group items through common atoms, of which 8 became candidates; by
  // the lead group, 250. One read per key, no table per atom or item.
  static constexpr uint32_t kLastKey = 1u << 31, kItemLimit = 1u << 27;
  static constexpr uint32_t kOneGroup = 0, kLeadGroup = 1, kNoItems = 2;
  std::vector<uint32_t> atom_items_;
  // The records of items of several groups, one after the other: the item, the
  // number of its other groups, then per other group its atom count and atoms.
  std::vector<uint32_t> item_rest_;
  uint32_t atom_count_ = 0;           // derived
  std::vector<uint8_t> item_groups_;  // groups of each item (0: always); build only
  std::vector<uint32_t> always_;
  uint32_t item_count_ = 0;

  // Per-call scratch: the atoms seen in this text (a bit per key of atom_items_:
  // small enough to stay in cache, cleared through atoms_found_), the records of
  // the items whose lead group was seen, and per item the epoch that decided it.
  mutable std::vector<uint64_t> atom_seen_;
  mutable std::vector<uint32_t> atoms_found_;
  mutable std::vector<uint32_t> leads_found_;
  mutable std::vector<uint32_t> item_state_;
  mutable uint32_t epoch_ = 0;
};

}  // namespace factlens

#endif  // FACTLENS_PREFILTER_H_
