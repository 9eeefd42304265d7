#include "lance/warnings.h"

#include <iostream>

namespace lance {
namespace {

WarningHandler& Handler() {
  static WarningHandler handler;
  return handler;
}

}  // namespace

void SetWarningHandler(WarningHandler handler) { Handler() = std::move(handler); }

void Warn(const std::string& message) {
  if (Handler()) {
    Handler()(message);
  } else {
    std::cerr << "warning: " << message << "\n";
  }
}

}  // namespace lance
