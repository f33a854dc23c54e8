#pragma once
/// Which directories debugger plugins (libompd, DMPL libraries, the MPI message-queue DLL)
/// may be loaded from (`--plugin-path`, `set plugin-path`), in the model's words: the front
/// ends see plugins only through the model (issue 19), so this stands for the plugin host's
/// policy without naming it (libdebugger's own files reach that one: src/session/
/// plugin_trust_host.hpp).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace ompdbg::debugger {

class plugin_trust_policy {
public:
    plugin_trust_policy();
    ~plugin_trust_policy();
    plugin_trust_policy(const plugin_trust_policy& other);
    plugin_trust_policy& operator=(const plugin_trust_policy& other);

    /// Allows every file under `dir` (kept as given and canonicalised when it exists).
    void allow_directory(const std::filesystem::path& dir);
    /// std::nullopt when `file` may be loaded; otherwise one line that names the file, says
    /// why it is refused and how to allow it. Never throws.
    std::optional<std::string> refusal(const std::filesystem::path& file) const;

    /// The plugin host's policy, defined in libdebugger's src/session/plugin_trust_host.hpp.
    struct impl;
    const impl& internals() const { return *impl_; }

private:
    std::unique_ptr<impl> impl_;
};

}  // namespace ompdbg::debugger
