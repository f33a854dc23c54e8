#include "dap/dap_protocol.hpp"

#include <algorithm>

namespace ompdbg::app::dap {

request::request(transport& t, nlohmann::json message) : t_(t) {
    seq_ = message.value("seq", std::int64_t{0});
    command_ = message.value("command", std::string());
    if (auto it = message.find("arguments"); it != message.end() && it->is_object()) {
        arguments_ = *it;
    } else {
        arguments_ = nlohmann::json::object();
    }
}

std::string request::string_arg(const char* key, std::string fallback) const {
    auto it = arguments_.find(key);
    return it != arguments_.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool request::bool_arg(const char* key, bool fallback) const {
    auto it = arguments_.find(key);
    return it != arguments_.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

void request::respond(nlohmann::json body) {
    if (answered_) {
        return;
    }
    answered_ = true;
    t_.send({{"type", "response"}, {"request_seq", seq_}, {"success", true}, {"command", command_}, {"body", body}});
}

void request::fail(const std::string& message) {
    if (answered_) {
        return;
    }
    answered_ = true;
    t_.send({{"type", "response"},
             {"request_seq", seq_},
             {"success", false},
             {"command", command_},
             {"message", message},
             {"body", {{"error", {{"id", 1}, {"format", message}, {"showUser", true}}}}}});
}

nlohmann::json make_event(const std::string& name, nlohmann::json body) {
    return {{"type", "event"}, {"event", name}, {"body", std::move(body)}};
}

nlohmann::json page_of(const nlohmann::json& list, int start, int count) {
    nlohmann::json page = nlohmann::json::array();
    for (std::size_t i = static_cast<std::size_t>(std::max(0, start));
         i < list.size() && (count <= 0 || page.size() < static_cast<std::size_t>(count)); ++i) {
        page.push_back(list[i]);
    }
    return page;
}

}  // namespace ompdbg::app::dap
