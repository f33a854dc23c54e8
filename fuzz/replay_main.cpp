// The main() of a fuzz target outside libFuzzer: runs every file given on the command line,
// and every file of every directory given, through LLVMFuzzerTestOneInput once. The saved
// crash inputs of tests/fuzz_regressions/<target>/ replay this way in the normal build
// (gcc, or the sanitizer build), so a fixed crash stays fixed.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void replay(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::printf("replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
    int count = 0;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path p(argv[i]);
        if (std::filesystem::is_directory(p)) {
            for (const auto& e : std::filesystem::directory_iterator(p)) {
                if (e.is_regular_file() && e.path().filename() != "README") {
                    replay(e.path());
                    ++count;
                }
            }
        } else if (std::filesystem::exists(p)) {
            replay(p);
            ++count;
        }
    }
    std::printf("%d inputs replayed without a crash\n", count);
    return 0;
}
