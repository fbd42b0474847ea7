// Copyright factlens authors. The publisher's commands of the factlens CLI: import
// (ClaimReview in, a list out), lint, test (examples through the engine) and publish
// (lint, test, version, sign, write list + signature + index.json atomically).
#ifndef FACTLENS_CLI_PUBLISHER_H_
#define FACTLENS_CLI_PUBLISHER_H_

#include "io.h"

namespace factlens::cli {

int Import(const Args& args);
int Lint(const Args& args);
int Test(const Args& args);
int Publish(const Args& args);

const char* ImportHelp();
const char* LintHelp();
const char* TestHelp();
const char* PublishHelp();

}  // namespace factlens::cli

#endif  // FACTLENS_CLI_PUBLISHER_H_
