// Copyright factlens authors. Subcommands of the factlens CLI that live in their own
// files; main.cc dispatches to them.
#ifndef FACTLENS_CLI_COMMANDS_H_
#define FACTLENS_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace factlens {
namespace cli {

// `factlens bench`: the native side of `npm run bench` (bench.cc).
int Bench(const std::vector<std::string>& args);
const char* BenchHelp();

// `factlens compile`: writes a list's compiled form (compile.cc).
int Compile(const std::vector<std::string>& args);
const char* CompileHelp();

}  // namespace cli
}  // namespace factlens

#endif  // FACTLENS_CLI_COMMANDS_H_
