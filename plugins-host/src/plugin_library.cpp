#include "ompdbg/plugins/plugin_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <system_error>

#include "ompdbg/base/error.hpp"
#include "ompdbg/base/log.hpp"

namespace ompdbg::plugins {

namespace fs = std::filesystem;

namespace {

/// Why `st` (of `what`) may not be trusted: owned by someone other than root or us, or
/// writable by group/others. Empty when it is fine.
std::string ownership_problem(const struct stat& st, const std::string& what) {
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
        return what + " is owned by uid " + std::to_string(st.st_uid) + " (neither root nor you)";
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return what + ((st.st_mode & S_IWOTH) ? " is writable by others" : " is writable by its group");
    }
    return {};
}

bool is_under(const fs::path& file, const fs::path& dir) {
    auto f = file.lexically_normal();
    auto d = dir.lexically_normal();
    auto fi = f.begin();
    for (auto di = d.begin(); di != d.end(); ++di, ++fi) {
        if (di->empty()) {
            continue;  // trailing slash
        }
        if (fi == f.end() || *fi != *di) {
            return false;
        }
    }
    return true;
}

}  // namespace

void plugin_policy::allow_directory(const fs::path& dir) {
    std::error_code ec;
    auto canon = fs::weakly_canonical(fs::absolute(dir, ec), ec);
    allowed_.push_back(ec ? dir : canon);
}

std::optional<std::string> plugin_policy::refusal(const fs::path& file) const {
    std::error_code ec;
    // Decide on the file the loader would really map: symbolic links resolved.
    fs::path real = fs::canonical(file, ec);
    if (ec) {
        return file.string() + ": No such file or directory";
    }
    for (const auto& dir : allowed_) {
        if (is_under(real, dir)) {
            return std::nullopt;
        }
    }
    struct stat fst {};
    struct stat dst {};
    const fs::path dir = real.parent_path();
    if (::stat(real.c_str(), &fst) != 0 || ::stat(dir.c_str(), &dst) != 0) {
        return real.string() + ": cannot check who owns it";
    }
    std::string why = ownership_problem(dst, "its directory " + dir.string());
    if (why.empty()) {
        why = ownership_problem(fst, "the file");
    }
    if (why.empty()) {
        return std::nullopt;
    }
    return "refusing to load plugin " + real.string() + ": " + why +
           "; allow it with 'set plugin-path " + dir.string() + "' or --plugin-path " +
           dir.string();
}

std::unique_ptr<plugin_library> plugin_library::open(const fs::path& file,
                                                     const plugin_policy& policy) {
    if (auto why = policy.refusal(file)) {
        error::send(*why);
    }
    fs::path real = fs::canonical(file);
    ::dlerror();
    void* handle = ::dlopen(real.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* msg = ::dlerror();
        error::send(msg ? std::string(msg) : real.string() + ": cannot be loaded");
    }
    log::write(log::channel::plugin, "loaded {}", real.string());
    return std::unique_ptr<plugin_library>(new plugin_library(real, handle));
}

void plugin_library::throw_missing(const fs::path& file, std::string_view kind, const std::string& name) {
    error::send(file.string() + ": not " + std::string(kind) + ": it does not define " + name);
}

plugin_library::~plugin_library() {
    if (handle_ != nullptr) {
        ::dlclose(handle_);
    }
}

void* plugin_library::find(const char* symbol) const noexcept {
    if (handle_ == nullptr || symbol == nullptr) {
        return nullptr;
    }
    ::dlerror();
    return ::dlsym(handle_, symbol);
}

}  // namespace ompdbg::plugins
