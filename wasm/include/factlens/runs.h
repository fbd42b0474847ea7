// Loops of functions that run once per load or restore, cut into runs of calls so
// that V8 optimises the loop's body and not the function around it.
//
// V8 compiles a wasm function with its baseline compiler (Liftoff) first, and with
// its optimising compiler (TurboFan) once the function has run long enough; the
// optimised code serves the function's next calls, never the call under way (wasm
// has no on-stack replacement). A function called once per restore whose loop runs
// over every rule (CompiledList::Import, SimilarIndex::Deserialize, its Finish)
// crosses that mark during its one call: TurboFan compiled it for nothing, up to a
// hundred milliseconds of CPU for the largest. On a reader's two cores those
// compilations ran beside the worker's restore and first checks and slowed them
// (extension/README: a cold worker's first check of 10 posts, 79-135 -> 28-67 ms).
//
// ForEachRun(count, body) calls body(i) for i in [0, count), a run of items per
// call of a function made for `body`, and stops at the first body(i) that returns
// false. The caller's own code runs once per run, so it stays in the baseline
// tier; the body's function is optimised after its first runs, and the later runs
// use that code. The call goes through a function pointer, made in runs.cc, so
// that neither the compiler nor Binaryen inlines the body back into the caller
// (Binaryen inlines any function that has one caller, wasm/README).
#ifndef FACTLENS_RUNS_H_
#define FACTLENS_RUNS_H_

#include <cstddef>
#include <type_traits>

namespace factlens {

// Items per call: at 10k rules, about forty calls a loop.
constexpr size_t kItemsPerRun = 256;

// run(body, begin, end) for each run of `count` items; false as soon as one is.
using RunFunction = bool (*)(void* body, size_t begin, size_t end);
bool CallInRuns(size_t count, size_t run_size, RunFunction run, void* body);

template <typename Body>
bool ForEachRun(size_t count, Body&& body, size_t run_size = kItemsPerRun) {
  using B = std::remove_reference_t<Body>;
  RunFunction run = [](void* b, size_t begin, size_t end) {
    B& f = *static_cast<B*>(b);
    for (size_t i = begin; i < end; ++i) {
      if (!f(i)) return false;
    }
    return true;
  };
  return CallInRuns(count, run_size, run,
                    const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace factlens

#endif  // FACTLENS_RUNS_H_
