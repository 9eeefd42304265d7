// Warnings: something went wrong after the work asked for succeeded (an
// automatic cleanup after a commit, say), so no Status carries it.
#pragma once

#include <functional>
#include <string>

namespace lance {

using WarningHandler = std::function<void(const std::string& message)>;

/// Where warnings go; the default (and a null `handler`) writes
/// "warning: MESSAGE" to stderr, as pylance logs them. Not thread-safe
/// against concurrent warnings: set it once at startup.
void SetWarningHandler(WarningHandler handler);

/// Reports a warning to the handler.
void Warn(const std::string& message);

}  // namespace lance
