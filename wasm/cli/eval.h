// Copyright factlens authors. `factlens eval`: claim-retrieval figures (MAP@k, MRR,
// recall and false-match rate at the engine's threshold) on CLEF CheckThat! files.
#ifndef FACTLENS_CLI_EVAL_H_
#define FACTLENS_CLI_EVAL_H_

#include <string>
#include <vector>

namespace factlens {

// Runs `factlens eval` with the arguments after the command name. Returns the exit
// status (0 ok, 2 usage or input error).
int Eval(const std::vector<std::string>& args);

// Returns the help text of `factlens eval`.
const char* EvalHelp();

}  // namespace factlens

#endif  // FACTLENS_CLI_EVAL_H_
