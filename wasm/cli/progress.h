// Copyright factlens authors. A progress bar on stderr for long `check` runs, only
// when stderr is a terminal: redirected output and logs never get control codes.
#ifndef FACTLENS_CLI_PROGRESS_H_
#define FACTLENS_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace factlens::cli {

class Progress {
 public:
  // `enabled` is usually isatty(2); FACTLENS_PROGRESS=0 turns it off.
  explicit Progress(bool enabled);
  ~Progress();

  // Starts a new input of `total_bytes` (0: unknown size, e.g. a pipe).
  void Begin(const std::string& name, uint64_t total_bytes);
  // Reports `bytes` read so far and `posts` checked; redraws at most 10 times a second.
  void Update(uint64_t bytes, uint64_t posts);
  // Clears the bar, so the summary line that follows starts clean.
  void Finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::string name_;
  uint64_t total_ = 0;
  std::chrono::steady_clock::time_point last_;
};

// Returns true if file descriptor 2 is a terminal.
bool StderrIsTerminal();

}  // namespace factlens::cli

#endif  // FACTLENS_CLI_PROGRESS_H_
