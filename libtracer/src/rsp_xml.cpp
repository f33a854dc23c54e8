// Attribute extraction from the remote protocol's XML documents (rsp_xml.hpp).
#include "internal/rsp_xml.hpp"

#include <fmt/format.h>

#include "ompdbg/base/error.hpp"

namespace ompdbg::tracer::rsp::internal {

namespace {

std::string decode_entities(std::string_view v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] != '&') {
            out += v[i];
            continue;
        }
        auto semi = v.find(';', i);
        if (semi == std::string_view::npos) {
            out += v[i];
            continue;
        }
        auto name = v.substr(i + 1, semi - i - 1);
        char c = name == "amp" ? '&' : name == "lt" ? '<' : name == "gt" ? '>' : name == "quot" ? '"' : name == "apos" ? '\'' : 0;
        if (c == 0) {
            out += v[i];
            continue;
        }
        out += c;
        i = semi;
    }
    return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::vector<xml_attributes> xml_elements(std::string_view xml, std::string_view tag) {
    std::vector<xml_attributes> out;
    std::string open = "<" + std::string(tag);
    for (std::size_t pos = xml.find(open); pos != std::string_view::npos; pos = xml.find(open, pos)) {
        std::size_t i = pos + open.size();
        if (i < xml.size() && !is_space(xml[i]) && xml[i] != '>' && xml[i] != '/') {
            pos = i;   // a longer tag name (<library-list> for <library>)
            continue;
        }
        xml_attributes attrs;
        for (;;) {
            while (i < xml.size() && is_space(xml[i])) {
                ++i;
            }
            if (i >= xml.size()) {
                error::send(fmt::format("Remote agent sent malformed XML: <{}> is not closed.", tag));
            }
            if (xml[i] == '>' || xml[i] == '/') {
                break;
            }
            auto eq = xml.find('=', i);
            if (eq == std::string_view::npos || eq + 1 >= xml.size() || (xml[eq + 1] != '"' && xml[eq + 1] != '\'')) {
                error::send(fmt::format("Remote agent sent malformed XML in <{}>.", tag));
            }
            char quote = xml[eq + 1];
            auto end = xml.find(quote, eq + 2);
            if (end == std::string_view::npos) {
                error::send(fmt::format("Remote agent sent malformed XML: an attribute of <{}> is not closed.", tag));
            }
            std::string name(xml.substr(i, eq - i));
            while (!name.empty() && is_space(name.back())) {
                name.pop_back();
            }
            attrs[name] = decode_entities(xml.substr(eq + 2, end - eq - 2));
            i = end + 1;
        }
        out.push_back(std::move(attrs));
        pos = i;
    }
    return out;
}

}  // namespace ompdbg::tracer::rsp::internal
