// Copyright factlens authors. The key and signature commands of the factlens CLI.
#ifndef FACTLENS_CLI_KEYS_H_
#define FACTLENS_CLI_KEYS_H_

#include "io.h"

namespace factlens::cli {

// factlens keygen / sign / verify / rotate; each returns the exit status.
int Keygen(const Args& args);
int SignFiles(const Args& args);
int VerifyFile(const Args& args);
int Rotate(const Args& args);

const char* KeygenHelp();
const char* SignHelp();
const char* VerifyHelp();
const char* RotateHelp();

}  // namespace factlens::cli

#endif  // FACTLENS_CLI_KEYS_H_
