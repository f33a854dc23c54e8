// --json: a whole session (breakpoints, stepping, printing, threads, a failing command,
// the exit) parsed line by line with nlohmann-json, each object checked against the
// schema table of docs/json.md.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"

using namespace ompdbg::test;
using namespace ompdbg::test::cli;

namespace {

struct key_rule {
    std::string name;
    std::string type;
    bool optional = false;
};

/// The schema table of docs/json.md: "| `event:exited` | `pid`: integer, ... |".
std::map<std::string, std::vector<key_rule>> documented_schema() {
    std::ifstream in(std::string(examples_source_dir) + "/../docs/json.md");
    std::map<std::string, std::vector<key_rule>> out;
    std::string line;
    bool in_schema = false;
    const std::regex row(R"(^\| `([a-z:-]+)` \| (.*) \|$)");
    const std::regex key(R"(`([a-z_]+)(\??)`: ([a-z]+))");
    while (std::getline(in, line)) {
        if (line.rfind("## ", 0) == 0) {
            in_schema = line == "## Schema";
            continue;
        }
        std::smatch m;
        if (!in_schema || !std::regex_match(line, m, row)) {
            continue;
        }
        std::vector<key_rule> rules;
        std::string keys = m[2];
        for (std::sregex_iterator it(keys.begin(), keys.end(), key), end; it != end; ++it) {
            rules.push_back({(*it)[1], (*it)[3], (*it)[2] == "?"});
        }
        out[m[1]] = rules;
    }
    return out;
}

bool has_type(const nlohmann::json& v, const std::string& type) {
    if (type == "integer") {
        return v.is_number_integer();
    }
    if (type == "string") {
        return v.is_string();
    }
    if (type == "boolean") {
        return v.is_boolean();
    }
    if (type == "array") {
        return v.is_array();
    }
    if (type == "object") {
        return v.is_object();
    }
    return false;
}

/// Parses every stdout line and checks it against the schema; returns the objects.
std::vector<nlohmann::json> checked_objects(const std::string& out) {
    static const auto schema = documented_schema();
    REQUIRE(schema.size() >= 10);
    std::vector<nlohmann::json> objects;
    for (const std::string& l : lines_of(out)) {
        INFO("line: " << l);
        nlohmann::json j;
        REQUIRE_NOTHROW(j = nlohmann::json::parse(l));
        REQUIRE(j.is_object());
        REQUIRE(j.contains("type"));
        REQUIRE(j["type"].is_string());
        std::string row = j["type"].get<std::string>();
        if (row == "event") {
            REQUIRE(j.contains("event"));
            REQUIRE(j["event"].is_string());
            row += ":" + j["event"].get<std::string>();
        }
        auto it = schema.find(row);
        INFO("schema row: " << row);
        REQUIRE(it != schema.end());   // every kind of object is documented
        for (const key_rule& k : it->second) {
            INFO("key: " << k.name);
            if (k.optional && !j.contains(k.name)) {
                continue;
            }
            REQUIRE(j.contains(k.name));
            CHECK(has_type(j[k.name], k.type));
        }
        if (row == "command") {
            for (auto& t : j["text"]) {
                CHECK(t.is_string());
            }
            CHECK(j.contains("error") == !j["ok"].get<bool>());
        }
        objects.push_back(j);
    }
    return objects;
}

const nlohmann::json* find_command(const std::vector<nlohmann::json>& objs, const std::string& command) {
    for (auto& o : objs) {
        if (o["type"] == "command" && o["command"] == command) {
            return &o;
        }
    }
    return nullptr;
}

std::vector<const nlohmann::json*> events(const std::vector<nlohmann::json>& objs, const std::string& kind) {
    std::vector<const nlohmann::json*> out;
    for (auto& o : objs) {
        if (o["type"] == "event" && o["event"] == kind) {
            out.push_back(&o);
        }
    }
    return out;
}

}  // namespace

TEST_CASE("json: a whole session is one schema-checked object per line", "[cli][json]") {
    int call_line = example_line("structs.c", "call_factorial");
    auto r = ompdbg_batch({"--json", "-ex", "break factorial", "-ex", "run", "-ex", "bt", "-ex", "print n",
                           "-ex", "print nosuchvariable", "-ex", "info breakpoints", "-ex", "delete", "-ex",
                           "finish", "-ex", "next", "-ex", "continue", example_path("structs")},
                          run_options().timeout_after(60s));
    INFO(r.all());
    // `print nosuchvariable` fails: batch exit status 1, the failure named on stderr.
    CHECK(r.exit_code == 1);
    // The program's own output went to stderr, never between the objects.
    CHECK(r.err.find("loop_total = ") != std::string::npos);
    auto objs = checked_objects(r.out);

    const nlohmann::json* brk = find_command(objs, "break factorial");
    REQUIRE(brk);
    CHECK((*brk).at("ok") == true);
    CHECK((*brk).at("result").at("breakpoint").at("number") == 1);

    auto hits = events(objs, "breakpoint-hit");
    REQUIRE(hits.size() >= 1);
    CHECK((*hits.at(0)).at("breakpoint") == 1);

    const nlohmann::json* bt = find_command(objs, "bt");
    REQUIRE(bt);
    auto frames = (*bt).at("result").at("frames");
    REQUIRE(frames.size() >= 2);
    CHECK(frames.at(0).at("function") == "factorial");
    CHECK(frames.at(1).at("function") == "main");
    CHECK(frames.at(1).at("line") == call_line);

    // The program computes factorial(4 + argc) with argc == 1.
    const nlohmann::json* pn = find_command(objs, "print n");
    REQUIRE(pn);
    CHECK((*pn).at("result").at("value") == "5");
    CHECK((*pn).at("result").at("type") == "int");
    CHECK((*pn).at("result").at("history") == 1);
    CHECK((*pn).at("text").at(0) == "$1 = 5");

    const nlohmann::json* bad = find_command(objs, "print nosuchvariable");
    REQUIRE(bad);
    CHECK((*bad).at("ok") == false);
    CHECK((*bad).at("error") == "No symbol \"nosuchvariable\" in current context.");
    CHECK((*bad).at("text").empty());

    const nlohmann::json* fin = find_command(objs, "finish");
    REQUIRE(fin);
    CHECK((*fin).at("result").at("return_value") == "120");

    // next reports where it stopped as a location event.
    CHECK(!events(objs, "location").empty());
    auto exited = events(objs, "exited");
    REQUIRE(exited.size() == 1);
    CHECK((*exited.at(0)).at("exit_code") == 0);
}

TEST_CASE("json: threads report thread-created events, errors outside commands are error objects",
          "[cli][json]") {
    auto r = ompdbg_batch({"--json", "-ex", "break worker", "-ex", "run", "-ex", "info threads", "-ex", "kill",
                           "--args", example_path("threads"), "3"},
                          run_options().timeout_after(60s));
    INFO(r.all());
    auto objs = checked_objects(r.out);
    CHECK(events(objs, "thread-created").size() >= 1);
    const nlohmann::json* it = find_command(objs, "info threads");
    REQUIRE(it);
    CHECK((*it).at("result").at("threads").size() >= 2);

    auto missing = ompdbg_batch({"--json", "/nonexistent/program"}, run_options().timeout_after(30s));
    INFO(missing.all());
    CHECK(missing.exit_code != 0);
    auto objs2 = checked_objects(missing.out);
    REQUIRE(objs2.size() == 1);
    CHECK(objs2.at(0).at("type") == "error");
    CHECK(objs2.at(0).at("message").get<std::string>().find("/nonexistent/program") != std::string::npos);
}

TEST_CASE("json: commands run by a breakpoint's commands get their own objects", "[cli][json]") {
    auto r = ompdbg_batch({"--json", "-ex", "break factorial", "-ex", "commands 1", "-ex", "silent", "-ex",
                           "print n", "-ex", "continue", "-ex", "end", "-ex", "run", example_path("structs")},
                          run_options().timeout_after(60s));
    INFO(r.all());
    auto objs = checked_objects(r.out);
    int prints = 0;
    for (auto& o : objs) {
        if (o.at("type") == "command" && o.at("command") == "print n") {
            ++prints;
        }
    }
    // factorial(5) recurses down to factorial(1): five hits.
    CHECK(prints == 5);
    CHECK(find_command(objs, "run") != nullptr);
}

TEST_CASE("json: a breakpoint-hit names the location hit, and break results each location's symbol",
          "[cli][json]") {
    // `break geometry::area` has a location in each overload; `break bump` one.
    auto r = ompdbg_batch({"--json", "-ex", "break geometry::area", "-ex", "break bump", "-ex", "run", "-ex",
                           "continue", "-ex", "continue", "-ex", "info breakpoints", "-ex", "kill",
                           example_path("cxx_features")},
                          run_options().timeout_after(60s));
    INFO(r.all());
    auto objs = checked_objects(r.out);

    const nlohmann::json* brk = find_command(objs, "break geometry::area");
    REQUIRE(brk);
    auto locs = (*brk).at("result").at("breakpoint").at("locations");
    REQUIRE(locs.size() == 2);
    CHECK(locs.at(0).at("function") == "geometry::area");
    CHECK(locs.at(0).at("symbol") == "geometry::area(int)");
    CHECK(locs.at(1).at("symbol") == "geometry::area(double)");

    // bump(), then area(int), then area(double): the text says what the fields say.
    auto hits = events(objs, "breakpoint-hit");
    REQUIRE(hits.size() == 3);
    CHECK((*hits.at(0)).at("breakpoint") == 2);
    CHECK((*hits.at(0)).at("location") == 1);
    CHECK((*hits.at(0)).at("text").get<std::string>().find("Breakpoint 2, bump (") != std::string::npos);
    CHECK((*hits.at(1)).at("breakpoint") == 1);
    CHECK((*hits.at(1)).at("location") == 1);
    CHECK((*hits.at(1)).at("text").get<std::string>().find("Breakpoint 1.1, geometry::area (side=4)") !=
          std::string::npos);
    CHECK((*hits.at(2)).at("breakpoint") == 1);
    CHECK((*hits.at(2)).at("location") == 2);
    CHECK((*hits.at(2)).at("text").get<std::string>().find("Breakpoint 1.2, geometry::area (radius=2)") !=
          std::string::npos);

    const nlohmann::json* info = find_command(objs, "info breakpoints");
    REQUIRE(info);
    auto rows = (*info).at("result").at("breakpoints");
    REQUIRE(rows.size() == 2);
    CHECK(rows.at(0).at("locations").at(1).at("symbol") == "geometry::area(double)");
    CHECK(rows.at(1).at("locations").at(0).at("symbol") == "bump(int&, geometry::shape const&)");
}
