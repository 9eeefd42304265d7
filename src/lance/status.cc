#include "lance/status.h"

#include <cstring>
#include <memory>

namespace lance {
namespace {

constexpr const char* kTypeId = "lance::ErrorKind";

class ErrorKindDetail : public arrow::StatusDetail {
 public:
  explicit ErrorKindDetail(ErrorKind kind) : kind_(kind) {}
  const char* type_id() const override { return kTypeId; }
  std::string ToString() const override {
    switch (kind_) {
      case ErrorKind::kRetryableCommitConflict: return "retryable commit conflict";
      case ErrorKind::kCommitConflict: return "commit conflict";
      case ErrorKind::kTooMuchWriteContention: return "too much write contention";
      case ErrorKind::kOther: break;
    }
    return "error";
  }
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace

ErrorKind GetErrorKind(const Status& status) {
  if (status.ok() || status.detail() == nullptr) return ErrorKind::kOther;
  if (std::strcmp(status.detail()->type_id(), kTypeId) != 0) return ErrorKind::kOther;
  return static_cast<const ErrorKindDetail&>(*status.detail()).kind();
}

Status MakeError(ErrorKind kind, const std::string& message) {
  return Status(arrow::StatusCode::Invalid, message, std::make_shared<ErrorKindDetail>(kind));
}

}  // namespace lance
