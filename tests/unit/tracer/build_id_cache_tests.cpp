// The size bound of the build-id cache of files fetched from other hosts (remote_files.hpp):
// past the bound the files used least recently go, never the one just added nor another
// session's transfer in progress; OMPDBG_BUILD_ID_CACHE_LIMIT's sizes.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <ctime>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "ompdbg/tracer/remote_files.hpp"

using namespace ompdbg::tracer;
namespace fs = std::filesystem;

namespace {

/// A cache directory for one test, removed with everything in it at the end.
struct cache_dir {
    fs::path path;
    cache_dir() {
        std::string templ = (fs::temp_directory_path() / "ompdbg-build-id-cache-XXXXXX").string();
        REQUIRE(::mkdtemp(templ.data()) != nullptr);
        path = templ;
    }
    ~cache_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    cache_dir(const cache_dir&) = delete;
    cache_dir& operator=(const cache_dir&) = delete;

    /// A cached file of `size` bytes for `build_id`, last used (its access time) `age` ago.
    fs::path put(const std::string& build_id, std::size_t size, std::chrono::seconds age) {
        fs::path p = build_id_cache_path(path, build_id);
        fs::create_directories(p.parent_path());
        std::ofstream(p) << std::string(size, 'x');
        // Arrived a day ago, last used `age` ago.
        auto now = std::time(nullptr);
        const struct timespec times[2] = {{now - age.count(), 0}, {now - 86400, 0}};
        REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, 0) == 0);
        return p;
    }
};

}  // namespace

TEST_CASE("prune_build_id_cache removes the least recently used files until the cache fits its bound", "[tracer][remote]") {
    cache_dir cache;
    auto oldest = cache.put("aa0001", 4000, std::chrono::hours(3));
    auto older = cache.put("bb0002", 4000, std::chrono::hours(2));
    auto recent = cache.put("cc0003", 4000, std::chrono::hours(1));
    auto added = cache.put("aa0004", 4000, std::chrono::seconds(0));
    // Another session's transfer, not yet renamed into place: never counted nor removed.
    auto partial = cache.path / "dd" / ".0005.Ab12Cd";
    fs::create_directories(partial.parent_path());
    std::ofstream(partial) << std::string(100000, 'y');

    SECTION("under the bound nothing goes") {
        CHECK(prune_build_id_cache(cache.path, 16000, added).empty());
        CHECK(fs::exists(oldest));
    }
    SECTION("past it, the oldest first, until the rest fits") {
        auto removed = prune_build_id_cache(cache.path, 9000, added);
        CHECK(removed == std::vector<fs::path>{oldest, older});
        CHECK_FALSE(fs::exists(oldest));
        CHECK_FALSE(fs::exists(older));
        CHECK(fs::exists(recent));
        CHECK(fs::exists(added));
        CHECK(fs::exists(partial));
        CHECK(fs::exists(cache.path / "aa"));          // still holds the file just added
        CHECK_FALSE(fs::exists(cache.path / "bb"));    // emptied: removed with its last file
    }
    SECTION("the file just added stays even when it alone is past the bound") {
        auto removed = prune_build_id_cache(cache.path, 100, added);
        CHECK(removed.size() == 3);
        CHECK(fs::exists(added));
    }
    SECTION("a bound of 0 is no bound") {
        CHECK(prune_build_id_cache(cache.path, 0, added).empty());
        CHECK(fs::exists(oldest));
    }
}

TEST_CASE("OMPDBG_BUILD_ID_CACHE_LIMIT takes bytes or K or M or G or unlimited and anything else keeps the default",
          "[tracer][remote]") {
    CHECK(parse_cache_limit("123") == 123u);
    CHECK(parse_cache_limit("64K") == 64u * 1024);
    CHECK(parse_cache_limit("500m") == 500u * 1024 * 1024);
    CHECK(parse_cache_limit("3G") == 3ULL << 30);
    CHECK(parse_cache_limit("0") == 0u);
    CHECK(parse_cache_limit("unlimited") == 0u);
    CHECK_FALSE(parse_cache_limit("lots"));
    CHECK_FALSE(parse_cache_limit("-5M"));
    CHECK_FALSE(parse_cache_limit(""));

    ::setenv("OMPDBG_BUILD_ID_CACHE_LIMIT", "10M", 1);
    CHECK(build_id_cache_limit() == 10u << 20);
    ::setenv("OMPDBG_BUILD_ID_CACHE_LIMIT", "ten megabytes", 1);
    CHECK(build_id_cache_limit() == default_build_id_cache_limit);
    ::unsetenv("OMPDBG_BUILD_ID_CACHE_LIMIT");
    CHECK(build_id_cache_limit() == default_build_id_cache_limit);
}
