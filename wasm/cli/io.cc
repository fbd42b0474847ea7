// Copyright factlens authors.
#include "io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace factlens::cli {

bool ReadFile(const std::string& path, std::string* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": error: cannot read file: " + std::strerror(errno);
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *out = buffer.str();
  return true;
}

bool WriteFileAtomic(const std::string& path, const std::string& data, int mode,
                     std::string* error) {
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0) {
    *error = path + ": error: cannot write file: " + std::strerror(errno);
    return false;
  }
  size_t written = 0;
  while (written < data.size()) {
    ssize_t n = write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = path + ": error: cannot write file: " + std::strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      return false;
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    *error = path + ": error: cannot write file: " + std::strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

std::string LocatedError(const std::string& file, const Status& s) {
  const std::string& m = s.message();
  unsigned line = 0, column = 0;
  int consumed = 0;
  if (std::sscanf(m.c_str(), "line %u, column %u: %n", &line, &column, &consumed) == 2 &&
      consumed > 0) {
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) +
           ": error: " + m.substr(consumed) + " [" + ErrorKindName(s.kind()) + "]";
  }
  return file + ": error: " + m + " [" + ErrorKindName(s.kind()) + "]";
}

int ExitCodeForLoad(const Status& s) {
  switch (s.kind()) {
    case ErrorKind::kSignature:
    case ErrorKind::kKey:
    case ErrorKind::kRollback:
    case ErrorKind::kExpired:
      return kExitFinding;
    default:
      return kExitUsage;
  }
}

int UsageError(const std::string& command, const std::string& message, const char* help) {
  std::cerr << "factlens " << command << ": error: " << message << "\n" << help;
  return kExitUsage;
}

}  // namespace factlens::cli
