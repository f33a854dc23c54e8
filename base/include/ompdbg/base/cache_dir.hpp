#pragma once
/// Where ompdbg keeps what it may compute or fetch again (the section cache, the build-id
/// cache of files fetched from other hosts): the XDG base directory specification's cache.

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace ompdbg {

/// $XDG_CACHE_HOME/ompdbg, else $HOME/.cache/ompdbg; nullopt when neither variable holds an
/// absolute path (the specification ignores a relative one).
inline std::optional<std::filesystem::path> cache_home() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x == '/') {
        return std::filesystem::path(x) / "ompdbg";
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
        return std::filesystem::path(home) / ".cache" / "ompdbg";
    }
    return std::nullopt;
}

}  // namespace ompdbg
