// Loops in runs of calls. See factlens/runs.h.
#include "factlens/runs.h"

namespace factlens {

// Out of line, in its own file: were it inlined, the compiler would see the
// function pointer and inline the body back into the caller.
bool CallInRuns(size_t count, size_t run_size, RunFunction run, void* body) {
  for (size_t at = 0; at < count; at += run_size) {
    const size_t end = count - at < run_size ? count : at + run_size;
    if (!run(body, at, end)) return false;
  }
  return true;
}

}  // namespace factlens
