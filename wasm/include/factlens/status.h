// Copyright factlens authors. Status: the result of every fallible engine call.
//
// The engine never throws across its boundary (RE2 style, and Embind cannot carry
// C++ exceptions cheaply). A Status is ok, or names a kind the JavaScript wrapper
// turns into FactlensError.kind, plus a message that says what was wrong and where.
#ifndef FACTLENS_STATUS_H_
#define FACTLENS_STATUS_H_

#include <string>
#include <utility>

namespace factlens {

enum class ErrorKind {
  kNone,         // success
  kFormat,       // the input is not a valid list / policy / argument
  kLimit,        // the input exceeds a hard limit (size, count, length, depth)
  kSignature,    // signature missing or does not verify
  kKey,          // public key malformed or not the one that signed
  kRollback,     // list version lower than (or equal to, with other bytes) the last one
  kExpired,      // list.expires is in the past
  kUnsupported,  // a feature this build does not provide yet
  kNotFound,     // no such list
};

// Returns the stable lower-case name of `kind` ("format", "limit", ...), as used in
// FactlensError.kind and in CLI messages.
const char* ErrorKindName(ErrorKind kind);

class Status {
 public:
  Status() = default;
  Status(ErrorKind kind, std::string message)
      : kind_(kind), message_(std::move(message)) {}

  // Returns a successful status.
  static Status Ok() { return Status(); }

  bool ok() const { return kind_ == ErrorKind::kNone; }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_ = ErrorKind::kNone;
  std::string message_;
};

}  // namespace factlens

#endif  // FACTLENS_STATUS_H_
