// Copyright factlens authors.
#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace factlens::cli {

bool StderrIsTerminal() { return isatty(2) == 1; }

Progress::Progress(bool enabled) : enabled_(enabled) {
  const char* env = std::getenv("FACTLENS_PROGRESS");
  if (env != nullptr && std::string(env) == "0") enabled_ = false;
}

Progress::~Progress() { Finish(); }

void Progress::Begin(const std::string& name, uint64_t total_bytes) {
  name_ = name;
  total_ = total_bytes;
  last_ = std::chrono::steady_clock::time_point();
}

void Progress::Update(uint64_t bytes, uint64_t posts) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  if (total_ > 0) {
    int width = 30;
    double share = bytes >= total_ ? 1.0 : static_cast<double>(bytes) / total_;
    int filled = static_cast<int>(share * width);
    std::string bar(filled, '#');
    bar.append(width - filled, '.');
    std::fprintf(stderr, "\r%s [%s] %3d%% %llu posts", name_.c_str(), bar.c_str(),
                 static_cast<int>(share * 100), static_cast<unsigned long long>(posts));
  } else {
    std::fprintf(stderr, "\r%s: %llu posts", name_.c_str(),
                 static_cast<unsigned long long>(posts));
  }
  std::fflush(stderr);
}

void Progress::Finish() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace factlens::cli
