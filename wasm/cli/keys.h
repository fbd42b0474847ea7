// Copyright factlens authors. The key and signature commands of the factlens CLI.
#ifndef FACTLENS_CLI_KEYS_H_
#define FACTLENS_CLI_KEYS_H_

#include <string>

#include "factlens/verify.h"
#include "io.h"

namespace factlens::cli {

// factlens keygen / sign / verify / rotate; each returns the exit status.
int Keygen(const Args& args);
int SignFiles(const Args& args);
int VerifyFile(const Args& args);
int Rotate(const Args& args);

// Loads the secret key file `path` as `sign` does: the password of an encrypted key
// from `password_file` or the terminal. Returns an exit status (errors printed).
int ReadSecretKey(const std::string& path, const std::string& password_file,
                  SecretKey* key);

const char* KeygenHelp();
const char* SignHelp();
const char* VerifyHelp();
const char* RotateHelp();

}  // namespace factlens::cli

#endif  // FACTLENS_CLI_KEYS_H_
