// plugin_library / plugin_policy and ompd_library::load against the real libompd.so of
// Debian's libomp-19-dev (and the bootstrap's), plus fake plugins for what the real one
// cannot provoke.

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "ompdbg/base/error.hpp"
#include "ompdbg/plugins/ompd.hpp"
#include "ompdbg/plugins/plugin_library.hpp"
#include "ompdbg_test_paths.hpp"

namespace fs = std::filesystem;
using namespace ompdbg;
using namespace ompdbg::plugins;

namespace {

const fs::path debian_libompd = "/usr/lib/llvm-19/lib/libompd.so";

std::string error_of(auto&& f) {
    try {
        f();
    } catch (const ompdbg::error& e) {
        return e.what();
    }
    return "";
}

/// A private directory under /tmp with `mode`, holding a copy of `lib`; removed at scope end.
struct temp_plugin_dir {
    fs::path dir;
    fs::path file;
    temp_plugin_dir(const fs::path& lib, mode_t mode) {
        char tmpl[] = "/tmp/ompdbg-plugin-XXXXXX";
        dir = ::mkdtemp(tmpl);
        file = dir / lib.filename();
        fs::copy_file(lib, file);
        ::chmod(file.c_str(), 0644);
        ::chmod(dir.c_str(), mode);
    }
    ~temp_plugin_dir() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

std::string strings_of(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("plugin_policy trusts a root-owned system directory", "[ompd]") {
    plugin_policy policy;
    CHECK_FALSE(policy.refusal(debian_libompd).has_value());
}

TEST_CASE("plugin_policy refuses a library in a directory others can write, naming how to allow it",
          "[ompd]") {
    temp_plugin_dir tmp(debian_libompd, 0777);
    plugin_policy policy;
    auto why = policy.refusal(tmp.file);
    REQUIRE(why.has_value());
    CHECK_THAT(*why, Catch::Contains(tmp.file.string()));
    CHECK_THAT(*why, Catch::Contains("writable by others"));
    CHECK_THAT(*why, Catch::Contains("set plugin-path " + tmp.dir.string()));
    CHECK(why->find('\n') == std::string::npos);
    // plugin_library::open refuses with the same line and loads nothing.
    CHECK(error_of([&] { plugin_library::open(tmp.file, policy); }) == *why);

    policy.allow_directory(tmp.dir);
    CHECK_FALSE(policy.refusal(tmp.file).has_value());
    auto lib = plugin_library::open(tmp.file, policy);
    CHECK(lib->find("ompd_initialize") != nullptr);
    CHECK(lib->find("no_such_symbol_here") == nullptr);
}

TEST_CASE("plugin_policy refuses a group-writable directory", "[ompd]") {
    temp_plugin_dir tmp(debian_libompd, 0775);
    plugin_policy policy;
    auto why = policy.refusal(tmp.file);
    REQUIRE(why.has_value());
    CHECK_THAT(*why, Catch::Contains("writable by its group"));
}

TEST_CASE("plugin_library::open says when the file does not exist", "[ompd]") {
    plugin_policy policy;
    CHECK(error_of([&] { plugin_library::open("/nonexistent/libompd.so", policy); }) ==
          "/nonexistent/libompd.so: No such file or directory");
}

TEST_CASE("ompd_library::load initialises the real libompd and reports its versions", "[ompd]") {
    plugin_policy policy;
    auto lib = ompd_library::load(debian_libompd, policy);
    CHECK(lib->path() == fs::canonical(debian_libompd));
    CHECK(lib->api_version() >= ompd_min_api_version);
    CHECK(lib->api_version() <= ompd_max_api_version);
    // Ground truth: the version string is text inside the library file.
    REQUIRE_FALSE(lib->version_string().empty());
    CHECK(strings_of(debian_libompd).find(lib->version_string()) != std::string::npos);
    // Loading the same file again gives the same initialised instance.
    CHECK(ompd_library::load(debian_libompd, policy) == lib);
}

TEST_CASE("ompd_library::load names the first entry point a library lacks", "[ompd]") {
    plugin_policy policy;
    auto fake = fs::path(ompdbg::test::targets_dir) / "plugins" / "libfake_ompd_missing_entry.so";
    CHECK(error_of([&] { ompd_library::load(fake, policy); }) ==
          fs::canonical(fake).string() +
              ": not an OMPD library: it does not define ompd_get_icv_string_from_scope");
    CHECK(error_of([&] { ompd_library::load("/lib/x86_64-linux-gnu/libm.so.6", policy); })
              .ends_with(": not an OMPD library: it does not define ompd_initialize"));
}

TEST_CASE("ompd_library::load rejects an unsupported OMPD API version", "[ompd]") {
    plugin_policy policy;
    auto fake = fs::path(ompdbg::test::targets_dir) / "plugins" / "libfake_ompd_old_api.so";
    CHECK_THAT(error_of([&] { ompd_library::load(fake, policy); }),
               Catch::Contains("OMPD API version 199901 is not supported"));
}

TEST_CASE("ompd_rc_name spells the codes as the spec does", "[ompd]") {
    CHECK(ompd_rc_name(0) == "ompd_rc_ok");
    CHECK(ompd_rc_name(2) == "ompd_rc_stale_handle");
    CHECK(ompd_rc_name(12) == "ompd_rc_callback_error");
    CHECK(ompd_rc_name(99) == "ompd_rc_99");
}
