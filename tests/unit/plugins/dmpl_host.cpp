// The DMPL host and ompdbg's two DMPL plugins: loading (both initialiser spellings, version
// check, broken libraries), the demanglers on names from real gcc 12 / clang 19 output
// (nm, c++filt as the truth), and the callbacks and DMPL_get_tls_address against a real
// OpenMP process under ptrace, checked against readelf, gdb and what the program prints.

#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ompdbg/base/error.hpp"
#include "ompdbg/plugins/dmpl.h"
#include "ompdbg/plugins/dmpl_host.hpp"
#include "ompdbg/tracer/process.hpp"
#include "ompdbg/tracer/thread_db.hpp"
#include "ompdbg_test_paths.hpp"
#include "process_runner.hpp"
#include "run_to_symbol.hpp"

namespace fs = std::filesystem;
using namespace ompdbg;
using namespace ompdbg::plugins;

using ompdbg::test::readelf_symbol;

namespace {

const std::string runtime_dir = std::string(ompdbg::test::cache_dir) + "/llvm-openmp-19.1.7/lib";

std::string plugin(const std::string& rt) {
    return std::string(ompdbg::test::plugins_dir) + "/libdmpl-" + rt + ".so";
}
std::string fake(const std::string& variant) {
    return std::string(ompdbg::test::dmpl_fakes_dir) + "/libfake-dmpl-" + variant + ".so";
}
std::string example(const std::string& name) {
    return std::string(ompdbg::test::examples_dir) + "/dmpl/" + name;
}
bool have_examples() {
    if (!fs::exists(example("tp_unallocated-clang-dwarf5-O0"))) {
        WARN("skipped: examples/dmpl not built (no libomp in the bootstrap cache)");
        return false;
    }
    return true;
}

std::string load_error(const std::string& file) {
    try {
        dmpl_library::load(file, plugin_policy{});
    } catch (const ompdbg::error& e) {
        return e.what();
    }
    return "(loaded)";
}

/// gdb's answer to `print EXPR` on a file (no process), as an integer.
std::optional<long> gdb_print(const std::string& file, const std::string& expr) {
    auto r = ompdbg::test::run({"gdb", "-nx", "-batch", "-ex", "print (long)(" + expr + ")", file});
    std::smatch m;
    if (std::regex_search(r.out, m, std::regex(R"(\$1 = (-?\d+))"))) {
        return std::stol(m[1]);
    }
    return std::nullopt;
}

/// Symbols of `file` whose names contain `part` (nm, locals included).
std::vector<std::string> nm_symbols(const std::string& file, const std::string& part) {
    auto r = ompdbg::test::run({"nm", file});
    std::vector<std::string> out;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) {
        auto sp = l.rfind(' ');
        std::string name = sp == std::string::npos ? l : l.substr(sp + 1);
        if (name.find(part) != std::string::npos) {
            out.push_back(name);
        }
    }
    return out;
}

std::string cxxfilt(const std::string& name) {
    auto r = ompdbg::test::run({"c++filt", name});
    std::string s = r.out;
    while (!s.empty() && s.back() == '\n') {
        s.pop_back();
    }
    return s;
}

/// Runs `program` until `function` is hit (by any thread); returns the stop.
std::unique_ptr<tracer::process> run_to(const std::string& program, const std::string& function,
                                        const fs::path& out, pid_t& hit_tid,
                                        tracer::process* resume = nullptr) {
    std::unique_ptr<tracer::process> owned;
    tracer::process* p = resume;
    if (p == nullptr) {
        tracer::launch_options opts;
        opts.stdout_path = out;
        owned = tracer::process::launch(program, {}, opts);
        p = owned.get();
    }
    hit_tid = ompdbg::test::run_to_symbol(*p, program, function);
    return owned;
}

int read_int(tracer::target& t, std::uint64_t addr) {
    int v = 0;
    t.read_memory(virt_addr(addr), std::as_writable_bytes(std::span(&v, 1)));
    return v;
}

}  // namespace

TEST_CASE("ompdbg's DMPL plugins load and name their runtime's routines", "[dmpl]") {
    auto omp = dmpl_library::load(plugin("libomp"), plugin_policy{});
    CHECK(omp->compatibility() == XLD_INTERFACE_COMPATIBILITY);
    CHECK(omp->initialiser() == "DMPL_initialise");
    CHECK(omp->version_string().find("libomp") != std::string::npos);
    for (int lang : {DMPL_lang_c, DMPL_lang_cplusplus, DMPL_lang_f77, DMPL_lang_f9x, DMPL_lang_unknown}) {
        auto n = omp->rtl_names(lang);
        REQUIRE(n);
        CHECK(n->main_task_dispatcher == "__kmpc_fork_call");
        CHECK(n->microtask_invoker == "__kmp_invoke_microtask");
    }
    CHECK_FALSE(omp->rtl_names('x'));
    // Both names are functions of the real runtime (readelf).
    CHECK(readelf_symbol(runtime_dir + "/libomp.so", "__kmpc_fork_call"));
    CHECK(readelf_symbol(runtime_dir + "/libomp.so", "__kmp_invoke_microtask"));

    auto gomp = dmpl_library::load(plugin("libgomp"), plugin_policy{});
    CHECK(gomp->version_string().find("libgomp") != std::string::npos);
    auto g = gomp->rtl_names(DMPL_lang_c);
    REQUIRE(g);
    CHECK(g->main_task_dispatcher == "GOMP_parallel");
    CHECK(g->microtask_invoker == "gomp_thread_start");
    // The same file twice is one library.
    CHECK(dmpl_library::load(plugin("libomp"), plugin_policy{}).get() == omp.get());
}

TEST_CASE("broken DMPL libraries are refused with one line naming the problem", "[dmpl]") {
    CHECK(load_error(fake("missing")).find("not a DMPL library: it does not define DMPL_get_tls_address") !=
          std::string::npos);
    CHECK(load_error(fake("version")).find("DMPL interface version 99 is not supported (ompdbg implements version 1)") !=
          std::string::npos);
    CHECK(load_error(fake("initfail")).find("DMPL_initialise failed: unknown DMPL code 7") != std::string::npos);
    CHECK(load_error("/nonexistent/libdmpl.so").find("No such file or directory") != std::string::npos);
    CHECK(load_error(runtime_dir + "/libomp.so").find("not a DMPL library") != std::string::npos);

    // The text's spelling DMPL_initialize is accepted; a code the library does not name is
    // reported as such.
    auto lib = dmpl_library::load(fake("unknown"), plugin_policy{});
    CHECK(lib->initialiser() == "DMPL_initialize");
    CHECK(lib->error_string(4242) == "unknown DMPL code 4242 (the DMPL library does not name it)");
    CHECK(lib->error_string(DMPL_ok) == "fine");
}

TEST_CASE("the libomp demangler maps clang 19's outlined routines to the user's functions", "[dmpl]") {
    if (!have_examples()) {
        return;
    }
    auto lib = dmpl_library::load(plugin("libomp"), plugin_policy{});
    auto syms = nm_symbols(example("outlined_names-clang-dwarf5-O0"), "omp_outlined");
    REQUIRE(syms.size() >= 8);
    int checked = 0;
    for (const auto& s : syms) {
        auto d = lib->demangle(s);
        INFO(s);
        if (s.find(".omp.reduction.") != std::string::npos) {
            CHECK(d.rc == DMPL_name_internal);
            continue;
        }
        if (s.starts_with(".omp_outlined")) {
            CHECK(d.rc == DMPL_ok);  // a task body: clang names no function
            continue;
        }
        REQUIRE(d.rc == DMPL_ok);
        // The user's function is what precedes the first ".omp_outlined", demangled.
        CHECK(d.name == cxxfilt(s.substr(0, s.find(".omp_outlined"))));
        ++checked;
    }
    CHECK(checked >= 8);
    CHECK(lib->demangle("main.omp_outlined_debug__.omp_outlined_debug__").name == "main");
    CHECK(lib->demangle("_ZN2ns1K4workEv.omp_outlined_debug__").name == "ns::K::work()");
    CHECK(lib->demangle(".omp_task_entry.").rc == DMPL_name_internal);
    CHECK(lib->demangle("main").rc == DMPL_name_unchanged);
    CHECK(lib->demangle("_Z6recordi").rc == DMPL_name_unchanged);
    CHECK(lib->demangle("").rc == DMPL_name_unchanged);

    // Variables seen in clang's outlined body (names and DWARF facts of clauses.c).
    const std::string r = "main.omp_outlined_debug__::";
    CHECK(lib->demangle(r + ".global_tid.", DMPL_hint_parameter).rc == DMPL_name_internal);
    CHECK(lib->demangle(r + ".omp.is_last").rc == DMPL_name_internal);
    auto sh = lib->demangle(r + "sh", DMPL_hint_parameter | DMPL_hint_by_reference);
    CHECK(sh.rc == DMPL_ok);
    CHECK(sh.name == "sh");
    CHECK(dmpl_varinfo_name(sh.varinfo) == "shared");
    CHECK(dmpl_varinfo_name(lib->demangle(r + "fp", DMPL_hint_parameter).varinfo) == "firstprivate");
    CHECK(dmpl_varinfo_name(lib->demangle(r + "pr").varinfo) == "private");
    CHECK(lib->demangle(r + "red", DMPL_hint_parameter | DMPL_hint_by_reference | DMPL_hint_has_copy).rc ==
          DMPL_name_internal);
    CHECK(lib->demangle("foo::i").rc == DMPL_name_unchanged);
    // The copy standing for a parameter: what the code does with it says which clause.
    CHECK(lib->demangle(r + "red", DMPL_hint_copy | DMPL_hint_reduction_code).varinfo == DMPL_varinfo_reduction);
    CHECK(lib->demangle(r + "lp", DMPL_hint_copy | DMPL_hint_copied_out).varinfo == DMPL_varinfo_lastprivate);
    CHECK(lib->demangle(r + "fa", DMPL_hint_copy | DMPL_hint_copied_in).varinfo == DMPL_varinfo_firstprivate);
    CHECK(lib->demangle(r + "fl", DMPL_hint_copy | DMPL_hint_copied_in | DMPL_hint_copied_out).varinfo ==
          DMPL_varinfo_firstlastprivate);
    CHECK(lib->demangle(r + "x", DMPL_hint_copy).varinfo == DMPL_varinfo_none);   // the code did not tell
    CHECK(lib->reduction_routines(DMPL_lang_c) ==
          std::vector<std::string>{"__kmpc_reduce", "__kmpc_reduce_nowait"});
    CHECK(lib->reduction_routines(12345).empty());

    // A buffer that is too small: DMPL_name_too_long with the length needed (the entry
    // point called directly, as a debugger without our host would).
    void* handle = ::dlopen(plugin("libomp").c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(handle != nullptr);
    auto demangle_name = reinterpret_cast<decltype(&DMPL_demangle_name)>(::dlsym(handle, "DMPL_demangle_name"));
    REQUIRE(demangle_name != nullptr);
    int len = 0, flags = 0, line = 0;
    char small[4];
    CHECK(demangle_name("_ZN2ns1K4workEv.omp_outlined", &len, small, sizeof small, &flags, &line) ==
          DMPL_name_too_long);
    CHECK(len == static_cast<int>(std::string("ns::K::work()").size()));
    CHECK(demangle_name(nullptr, &len, small, sizeof small, &flags, &line) != DMPL_ok);
    ::dlclose(handle);
}

TEST_CASE("the libgomp demangler maps gcc 12's outlined routines to the user's functions", "[dmpl]") {
    if (!have_examples()) {
        return;
    }
    auto lib = dmpl_library::load(plugin("libgomp"), plugin_policy{});
    auto syms = nm_symbols(example("outlined_names-gcc-dwarf5-O0"), "._omp_fn.");
    REQUIRE(syms.size() >= 6);
    for (const auto& s : syms) {
        INFO(s);
        auto d = lib->demangle(s);
        REQUIRE(d.rc == DMPL_ok);
        CHECK(d.name == cxxfilt(s.substr(0, s.find("._omp_fn."))));
    }
    CHECK(lib->demangle("_Z4tsumIiET_S0_._omp_fn.0").name == "int tsum<int>(int)");
    CHECK(lib->demangle("main._omp_cpyfn.1").rc == DMPL_name_internal);
    CHECK(lib->demangle("main").rc == DMPL_name_unchanged);
    const std::string r = "main._omp_fn.0::";
    CHECK(lib->demangle(r + ".omp_data_i", DMPL_hint_parameter).rc == DMPL_name_internal);
    auto lp = lib->demangle(r + "lp", DMPL_hint_by_reference);
    CHECK(lp.rc == DMPL_ok);
    CHECK(lp.varinfo == (DMPL_varinfo_shared | DMPL_varinfo_needs_dereference));
    CHECK(lib->demangle(r + "pr").varinfo == DMPL_varinfo_private);
    CHECK(lib->demangle(r + "red", DMPL_hint_reduction_code).varinfo == DMPL_varinfo_reduction);
    CHECK(lib->demangle(r + "lp", DMPL_hint_copy | DMPL_hint_copied_out).varinfo == DMPL_varinfo_lastprivate);
    // Initialised from .omp_data_i: firstprivate, or a shared variable only read (the same code).
    CHECK(lib->demangle(r + "fp", DMPL_hint_copied_in).varinfo == DMPL_varinfo_none);
    CHECK(lib->reduction_routines(DMPL_lang_c) == std::vector<std::string>{"GOMP_atomic_start"});
}

TEST_CASE("the DMPL callbacks answer on a real OpenMP process, bad handles included", "[dmpl]") {
    if (!have_examples()) {
        return;
    }
    const std::string prog = example("tp_unallocated-clang-dwarf5-O0");
    fs::path out = fs::temp_directory_path() / ("ompdbg-dmpl-cb-" + std::to_string(::getpid()) + ".out");
    pid_t tid = 0;
    auto p = run_to(prog, "checkpoint_first", out, tid);
    auto tdb = tracer::thread_db::open(*p);
    REQUIRE(tdb);
    auto lib = dmpl_library::load(plugin("libomp"), plugin_policy{});
    dmpl_process proc(lib, *p, [&](pid_t t, std::uint64_t key) { return tdb->tsd(t, static_cast<unsigned>(key)); });
    auto* cb = static_cast<const DMPL_callbacks_t*>(dmpl_process::callbacks_for_testing());
    auto* ph = static_cast<DMPL_process_t*>(proc.process_handle_for_testing());
    auto* th = static_cast<DMPL_thread_t*>(proc.thread_handle_for_testing(tid));
    const tracer::loaded_module* libomp = nullptr;
    for (const auto& m : p->modules()) {
        if (m.path.filename() == "libomp.so") {
            libomp = &m;
        }
    }
    REQUIRE(libomp != nullptr);
    int garbage[8] = {};
    auto* bad_p = reinterpret_cast<DMPL_process_t*>(garbage);
    auto* bad_t = reinterpret_cast<DMPL_thread_t*>(garbage);

    SECTION("process and thread info, type sizes") {
        CHECK(cb->DMPL_get_process_fp(th) == ph);
        CHECK(cb->DMPL_get_process_fp(bad_t) == nullptr);
        cb->DMPL_put_thread_info_fp(th, reinterpret_cast<DMPL_thread_info_t*>(&garbage[1]));
        CHECK(cb->DMPL_get_thread_info_fp(th) == reinterpret_cast<DMPL_thread_info_t*>(&garbage[1]));
        cb->DMPL_put_thread_info_fp(th, nullptr);
        CHECK(cb->DMPL_get_process_info_fp(bad_p) == nullptr);
        DMPL_target_type_sizes_t ts{};
        REQUIRE(cb->DMPL_get_type_sizes_fp(ph, &ts) == DMPL_ok);
        CHECK(ts.short_size == 2);
        CHECK(ts.int_size == 4);
        CHECK(ts.long_size == 8);
        CHECK(ts.long_long_size == 8);
        CHECK(ts.pointer_size == 8);
        CHECK(cb->DMPL_get_type_sizes_fp(bad_p, &ts) == DMPL_host_bad_argument);
        CHECK(cb->DMPL_get_type_sizes_fp(ph, nullptr) == DMPL_host_bad_argument);
    }
    SECTION("find_symbol: local symbols of the runtime at their run-time address") {
        auto value = readelf_symbol(runtime_dir + "/libomp.so", "__kmp_threads");
        REQUIRE(value);
        DMPL_taddr_t a = 0;
        REQUIRE(cb->DMPL_find_symbol_fp(ph, "__kmp_threads", &a) == DMPL_ok);
        CHECK(a == *value + libomp->load_bias);
        CHECK(cb->DMPL_find_symbol_fp(ph, "no_such_symbol_anywhere", &a) == DMPL_host_no_symbol);
        CHECK(cb->DMPL_find_symbol_fp(ph, nullptr, &a) == DMPL_host_bad_argument);
        CHECK(cb->DMPL_find_symbol_fp(bad_p, "__kmp_threads", &a) == DMPL_host_bad_argument);
    }
    SECTION("find_type, sizeof and field_offset agree with gdb on libomp's DWARF") {
        DMPL_type_t* t = cb->DMPL_find_type_fp(ph, "kmp_base_info_t", DMPL_lang_cplusplus);
        REQUIRE(t != nullptr);
        auto size = gdb_print(runtime_dir + "/libomp.so", "sizeof(kmp_base_info_t)");
        auto off = gdb_print(runtime_dir + "/libomp.so", "&((kmp_base_info_t*)0)->th_pri_common");
        REQUIRE(size);
        REQUIRE(off);
        CHECK(cb->DMPL_sizeof_fp(t) == *size);
        CHECK(cb->DMPL_field_offset_fp(t, "th_pri_common") == *off);
        CHECK(cb->DMPL_field_offset_fp(t, "no_such_member") < 0);
        CHECK(cb->DMPL_sizeof_fp(reinterpret_cast<DMPL_type_t*>(garbage)) < 0);
        CHECK(cb->DMPL_find_type_fp(ph, "no_such_type_anywhere", DMPL_lang_c) == nullptr);
    }
    SECTION("get_data reads the target, and refuses unreadable memory") {
        auto sym = readelf_symbol(prog, "a");
        REQUIRE(sym);
        const tracer::loaded_module* exe = nullptr;
        for (const auto& m : p->modules()) {
            if (m.is_executable) {
                exe = &m;
            }
        }
        int v = 0;
        REQUIRE(cb->DMPL_get_data_fp(th, exe->to_runtime(*sym).addr(), &v, sizeof v) == DMPL_ok);
        CHECK(v == 42);  // thread 0 is the initial thread: its copy is `a` itself
        CHECK(cb->DMPL_get_data_fp(th, 0, &v, sizeof v) == DMPL_host_read_error);
        CHECK(cb->DMPL_get_data_fp(bad_t, 0, &v, sizeof v) == DMPL_host_bad_argument);
        int copy = 0;
        cb->DMPL_target_to_host_fp(th, &v, &copy, sizeof v);
        CHECK(copy == v);
    }
    SECTION("get_pthread_key gives the runtime's gtid + 1 (the paper's Fig. 10)") {
        DMPL_taddr_t key_addr = 0;
        REQUIRE(cb->DMPL_find_symbol_fp(ph, "__kmp_gtid_threadprivate_key", &key_addr) == DMPL_ok);
        int key = read_int(*p, key_addr);
        DMPL_taddr_t value = 0;
        REQUIRE(cb->DMPL_get_pthread_key_fp(th, key, &value) == DMPL_ok);
        CHECK(value == 1);  // the initial thread is gtid 0
        CHECK(cb->DMPL_get_pthread_key_fp(bad_t, key, &value) == DMPL_host_bad_argument);
        CHECK(cb->DMPL_get_pthread_key_fp(th, -1, &value) == DMPL_host_bad_argument);
    }
    SECTION("malloc, free, error strings, prints") {
        void* m = cb->DMPL_malloc_fp(16);
        CHECK(m != nullptr);
        cb->DMPL_free_fp(m);
        CHECK(std::string(cb->DMPL_error_string_fp(DMPL_host_no_symbol)) == "no such symbol in the process");
        cb->DMPL_prints_fp("hello from a test");
        cb->DMPL_prints_fp(nullptr);
    }
    p->kill();
    std::error_code ec;
    fs::remove(out, ec);
}

TEST_CASE("DMPL_get_tls_address walks libomp's threadprivate cache per thread", "[dmpl]") {
    if (!have_examples()) {
        return;
    }
    const std::string prog = example("tp_unallocated-clang-dwarf5-O0");
    fs::path out = fs::temp_directory_path() / ("ompdbg-dmpl-tls-" + std::to_string(::getpid()) + ".out");
    pid_t tid0 = 0;
    auto p = run_to(prog, "checkpoint_first", out, tid0);
    auto tdb = tracer::thread_db::open(*p);
    REQUIRE(tdb);
    auto lib = dmpl_library::load(plugin("libomp"), plugin_policy{});
    auto proc = std::make_unique<dmpl_process>(
        lib, *p, [&](pid_t t, std::uint64_t key) { return tdb->tsd(t, static_cast<unsigned>(key)); });
    auto sym = readelf_symbol(prog, "a");
    REQUIRE(sym);
    std::uint64_t a_addr = 0;
    for (const auto& m : p->modules()) {
        if (m.is_executable) {
            a_addr = m.to_runtime(*sym).addr();
        }
    }
    // Thread 0 (the initial thread) has written 42 into `a` itself; the other thread of the
    // team has not touched its copy yet.
    CHECK(tid0 == p->pid());
    auto t0 = proc->tls_address(tid0, a_addr);
    REQUIRE(t0.rc == DMPL_ok);
    CHECK(t0.address == a_addr);
    CHECK(read_int(*p, t0.address) == 42);
    int unallocated = 0;
    for (tracer::thread* t : p->threads()) {
        if (t->tid() != tid0) {
            auto r = proc->tls_address(t->tid(), a_addr);
            CHECK((r.rc == DMPL_tls_unallocated || r.rc == DMPL_first_user_code + 1));
            unallocated += r.rc == DMPL_tls_unallocated;
            CHECK_FALSE(r.message.empty());
        }
    }
    CHECK(unallocated >= 1);
    // Not a threadprivate object: the runtime does not manage it.
    CHECK(proc->tls_address(tid0, a_addr + 4096).rc == DMPL_tls_native);

    // Thread 1 writes 43 into its copy: DMPL finds it where the program says it is.
    pid_t tid1 = 0;
    proc->forget_exited_threads();
    run_to(prog, "checkpoint_second", out, tid1, p.get());
    CHECK(tid1 != tid0);
    auto t1 = proc->tls_address(tid1, a_addr);
    REQUIRE(t1.rc == DMPL_ok);
    CHECK(t1.address != a_addr);
    CHECK(read_int(*p, t1.address) == 43);
    std::ifstream in(out);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex(R"(thread 1 a=43 at (0x[0-9a-f]+))")));
    CHECK(t1.address == std::stoull(m[1], nullptr, 16));
    CHECK(read_int(*p, proc->tls_address(tid0, a_addr).address) == 42);
    proc.reset();
    p->kill();
    std::error_code ec;
    fs::remove(out, ec);
}
