// Copyright factlens authors. Shared plumbing of the factlens CLI commands: exit
// codes, file reading and atomic writing, and error messages with locations.
#ifndef FACTLENS_CLI_IO_H_
#define FACTLENS_CLI_IO_H_

#include <string>
#include <vector>

#include "factlens/status.h"

namespace factlens::cli {

using Args = std::vector<std::string>;

// DESIGN.md: 0 success, 1 a finding (bad signature, lint error, failed example),
// 2 usage or input errors.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFinding = 1;
inline constexpr int kExitUsage = 2;

// Reads the whole file; on failure sets *error to "path: error: ...".
bool ReadFile(const std::string& path, std::string* out, std::string* error);

// Writes `data` to a temporary file beside `path` and renames it over `path`, so a
// failure never leaves a half-written file. On failure sets *error.
bool WriteFileAtomic(const std::string& path, const std::string& data, int mode,
                     std::string* error);

// Returns "file:line:col: error: message [kind]" when the status carries a JSON
// position ("line 3, column 7: ..."), else "file: error: message [kind]".
std::string LocatedError(const std::string& file, const Status& s);

// Returns the exit status for a list that failed to load: a refusal of the list
// itself (signature, key, rollback, expiry) is a finding (1); anything else, such
// as a malformed list, is an input error (2).
int ExitCodeForLoad(const Status& s);

// Prints "factlens CMD: error: MESSAGE" and the command's help; returns kExitUsage.
int UsageError(const std::string& command, const std::string& message, const char* help);

}  // namespace factlens::cli

#endif  // FACTLENS_CLI_IO_H_
