// Copyright factlens authors.
#include "factlens/status.h"

namespace factlens {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return "ok";
    case ErrorKind::kFormat:
      return "format";
    case ErrorKind::kLimit:
      return "limit";
    case ErrorKind::kSignature:
      return "signature";
    case ErrorKind::kKey:
      return "key";
    case ErrorKind::kRollback:
      return "rollback";
    case ErrorKind::kExpired:
      return "expired";
    case ErrorKind::kUnsupported:
      return "unsupported";
    case ErrorKind::kNotFound:
      return "not_found";
  }
  return "format";
}

}  // namespace factlens
