#pragma once
/// A debugger plugin (libompd, a DMPL plugin, an MPI message-queue DLL) is code that the
/// *target* names and that runs inside the debugger. `plugin_policy` decides which files may
/// be loaded; `plugin_library` is the RAII dlopen handle of one loaded file.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::plugins {

/// Where plugins may come from. A file is trusted when its directory (after resolving
/// symbolic links) is owned by root or by the user running the debugger and is not writable
/// by group or others, and the file itself is owned and protected the same way; or when the
/// file lies under a directory the user allowed (`--plugin-path DIR`, `set plugin-path DIR`).
class plugin_policy {
public:
    /// Allows every file under `dir` (kept as given and canonicalised when it exists).
    void allow_directory(const std::filesystem::path& dir);
    /// The directories allowed so far, in the order given.
    const std::vector<std::filesystem::path>& allowed_directories() const { return allowed_; }

    /// std::nullopt when `file` may be loaded; otherwise one line that names the file, says
    /// why it is refused and how to allow it. Never throws.
    std::optional<std::string> refusal(const std::filesystem::path& file) const;

private:
    std::vector<std::filesystem::path> allowed_;
};

/// One dlopen()ed plugin (RTLD_NOW | RTLD_LOCAL). Closing happens in the destructor.
class plugin_library {
public:
    /// Checks `file` against `policy` and loads it. Throws ompdbg::error with one line:
    /// the policy's refusal, "<file>: No such file or directory", or dlerror()'s text.
    static std::unique_ptr<plugin_library> open(const std::filesystem::path& file,
                                                const plugin_policy& policy);
    ~plugin_library();
    plugin_library(const plugin_library&) = delete;
    plugin_library& operator=(const plugin_library&) = delete;

    /// The path it was loaded from (canonical).
    const std::filesystem::path& path() const { return path_; }
    /// Address of an exported symbol, or nullptr when the library does not define it.
    void* find(const char* symbol) const noexcept;

    /// Fills every entry point of an API table: `Table::resolve(lookup)` walks its X-macro
    /// list of names, stores `lookup(name)` in each slot and returns the first name that is
    /// missing (nullopt when all are present). See src/internal/ompd_api.hpp.
    template <typename Table>
    std::optional<std::string> resolve(Table& table) const {
        return table.resolve([this](const char* name) { return find(name); });
    }

    /// open() and resolve() in one: loads `file` under `policy` and fills `table`. Throws
    /// ompdbg::error "<file>: not a KIND: it does not define NAME" when an entry point is
    /// missing (`kind`: "an OMPD library", "a DMPL library", "a message-queue DLL").
    template <typename Table>
    static std::unique_ptr<plugin_library> open_api(const std::filesystem::path& file, const plugin_policy& policy,
                                                    Table& table, std::string_view kind) {
        auto lib = open(file, policy);
        if (auto missing = lib->resolve(table)) {
            throw_missing(lib->path(), kind, *missing);
        }
        return lib;
    }

private:
    [[noreturn]] static void throw_missing(const std::filesystem::path& file, std::string_view kind,
                                           const std::string& name);
    plugin_library(std::filesystem::path path, void* handle) : path_(std::move(path)), handle_(handle) {}
    std::filesystem::path path_;
    void* handle_;
};

/// One initialised instance per plugin file, shared while it lives: libompd and DMPL
/// libraries keep the debugger's callback table in globals, so initialising one file twice
/// would replace the first instance's. Returns the live instance loaded from `file` (by
/// canonical path), else the one `make()` builds (which may throw), remembered from then on.
template <typename T, typename Make>
std::shared_ptr<T> load_once(const std::filesystem::path& file, Make&& make) {
    static std::mutex mutex;
    static std::map<std::filesystem::path, std::weak_ptr<T>> loaded;
    std::lock_guard lock(mutex);
    std::error_code ec;
    std::filesystem::path key = std::filesystem::weakly_canonical(file, ec);
    if (ec) {
        key = file;
    }
    if (auto it = loaded.find(key); it != loaded.end()) {
        if (auto lib = it->second.lock()) {
            return lib;
        }
    }
    std::shared_ptr<T> lib = make();
    loaded[key] = lib;
    return lib;
}

}  // namespace ompdbg::plugins
