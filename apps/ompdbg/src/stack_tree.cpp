// The text, JSON and Graphviz forms of the merged prefix tree of stacks (STAT).

#include "stack_tree.hpp"

#include <fmt/format.h>

#include "commands_mpi.hpp"

namespace ompdbg::app {

namespace {

std::string count_text(std::size_t n, const char* what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
}

std::string ranks_of(const stack_tree::node& n) {
    return format_rank_list({n.ranks.begin(), n.ranks.end()});
}

void text_lines(const stack_tree::node& n, const std::string& name, const std::string& indent, bool last, bool root,
                stack_tree_tag t, std::vector<std::string>& out) {
    std::string next = root ? "" : indent + (last ? "   " : "|  ");
    if (!root) {
        std::string tag = t == stack_tree_tag::ranks     ? fmt::format("rank {}", ranks_of(n))
                          : t == stack_tree_tag::threads ? count_text(n.threads.size(), "thread")
                                                          : fmt::format("rank {}, {}", ranks_of(n),
                                                                        count_text(n.threads.size(), "thread"));
        out.push_back(fmt::format("{}{}{} [{}]", indent, last ? "`- " : "|- ", name, tag));
    }
    for (const auto& [label, who] : n.labels) {
        std::set<int> ranks;
        std::vector<int> numbers;
        for (auto [r, num] : who) {
            ranks.insert(r);
            numbers.push_back(num);
        }
        std::string whom = t == stack_tree_tag::threads
                               ? fmt::format("{} ({})", count_text(who.size(), "thread"), format_rank_list(numbers))
                               : fmt::format("{} in rank {}", count_text(who.size(), "thread"),
                                             format_rank_list({ranks.begin(), ranks.end()}));
        out.push_back(fmt::format("{}   => {}: {}", next, whom, label));
    }
    std::size_t i = 0;
    for (const auto& [child_name, child] : n.children) {
        text_lines(child, child_name, next, ++i == n.children.size(), false, t, out);
    }
}

nlohmann::json node_json(const stack_tree::node& n, const std::string& name) {
    nlohmann::json j{{"name", name},
                     {"ranks", std::vector<int>(n.ranks.begin(), n.ranks.end())},
                     {"threads", n.threads.size()},
                     {"children", nlohmann::json::array()}};
    nlohmann::json labels = nlohmann::json::array();
    for (const auto& [label, who] : n.labels) {
        nlohmann::json members = nlohmann::json::array();
        for (auto [r, num] : who) {
            members.push_back({{"rank", r}, {"thread", num}});
        }
        labels.push_back({{"label", label}, {"threads", members}});
    }
    j["labels"] = labels;
    for (const auto& [child_name, child] : n.children) {
        j["children"].push_back(node_json(child, child_name));
    }
    return j;
}

void node_dot(const stack_tree::node& n, const std::string& name, int& next_id, int parent,
              const std::function<std::string(const stack_tree::node&)>& who,
              const std::function<std::string(const stack_tree::node&)>& edge, std::ostream& out) {
    int id = next_id++;
    std::string escaped;
    for (char c : name) {
        if (c == '"' || c == '\\') {
            escaped += '\\';
        }
        escaped += c;
    }
    out << fmt::format("  n{} [label=\"{}\\n{}\"];\n", id, escaped, who(n));
    if (parent >= 0) {
        out << fmt::format("  n{} -> n{} [label=\"{}\"];\n", parent, id, edge(n));
    }
    for (const auto& [child_name, child] : n.children) {
        node_dot(child, child_name, next_id, id, who, edge, out);
    }
}

}  // namespace

std::vector<std::string> stack_tree_lines(const stack_tree& tree, stack_tree_tag t) {
    std::vector<std::string> out;
    text_lines(tree.root(), "", "", true, true, t, out);
    return out;
}

nlohmann::json stack_tree_json(const stack_tree& tree, const std::string& root_name) {
    return node_json(tree.root(), root_name);
}

void write_stack_tree_dot(const stack_tree& tree, std::ostream& out, const std::string& root_name,
                          const std::function<std::string(const stack_tree::node&)>& who,
                          const std::function<std::string(const stack_tree::node&)>& edge) {
    int id = 0;
    node_dot(tree.root(), root_name, id, -1, who, edge, out);
}

}  // namespace ompdbg::app
