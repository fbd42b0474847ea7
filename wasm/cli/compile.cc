// Copyright factlens authors. `factlens compile`: a list's compiled form as a file,
// the native counterpart of engine.exportCompiled() (see engine.h for the layout).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "factlens/engine.h"
#include "io.h"

namespace factlens {
namespace cli {

namespace {
const char kCompileHelp[] =
    "usage: factlens compile --list FILE -o OUT [--allow-unsigned]\n"
    "\n"
    "Loads the list and writes its compiled form to OUT (written to a temporary\n"
    "name, then renamed): what the extension keeps in IndexedDB to restore a list\n"
    "without parsing it again. The compiled form is a cache, not a signed file:\n"
    "restore only files you made yourself.\n"
    "\n"
    "Exit status: 0 on success, 1 when the list's signature is missing, 2 on usage\n"
    "or input errors.\n";
}  // namespace

const char* CompileHelp() { return kCompileHelp; }

int Compile(const std::vector<std::string>& args) {
  std::string list_path, out_path;
  bool allow_unsigned = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--list" && i + 1 < args.size()) {
      list_path = args[++i];
    } else if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) {
      out_path = args[++i];
    } else if (args[i] == "--allow-unsigned") {
      allow_unsigned = true;
    } else if (args[i] == "-h" || args[i] == "--help") {
      std::cout << kCompileHelp;
      return 0;
    } else {
      std::cerr << "factlens compile: unexpected argument " << args[i] << "\n"
                << kCompileHelp;
      return 2;
    }
  }
  if (list_path.empty() || out_path.empty()) {
    std::cerr << "factlens compile: --list and -o are required\n" << kCompileHelp;
    return 2;
  }
  std::string text, error;
  if (!ReadFile(list_path, &text, &error)) {
    std::cerr << error << "\n";
    return 2;
  }
  Engine engine;
  LoadOptions options;
  options.allow_unsigned = allow_unsigned;
  LoadedListInfo info;
  Status s = engine.LoadList(text, options, &info);
  if (!s.ok()) {
    std::cerr << list_path << ": error: " << s.message() << " ["
              << ErrorKindName(s.kind()) << "]\n";
    return s.kind() == ErrorKind::kSignature ? 1 : 2;
  }
  std::string blob;
  s = engine.ExportCompiled(info.info.id, &blob);
  if (!s.ok()) {
    std::cerr << out_path << ": error: " << s.message() << "\n";
    return 2;
  }
  const std::string temp = out_path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
    out.close();
    if (!out) {
      std::cerr << temp << ": error: cannot write file: " << std::strerror(errno) << "\n";
      std::remove(temp.c_str());
      return 2;
    }
  }
  if (std::rename(temp.c_str(), out_path.c_str()) != 0) {
    std::cerr << out_path << ": error: cannot rename " << temp << ": "
              << std::strerror(errno) << "\n";
    std::remove(temp.c_str());
    return 2;
  }
  std::cerr << "factlens compile: " << info.info.id << " v" << info.info.version << ", "
            << info.rule_count << " rules -> " << out_path << " (" << blob.size()
            << " bytes)\n";
  return 0;
}

}  // namespace cli
}  // namespace factlens
