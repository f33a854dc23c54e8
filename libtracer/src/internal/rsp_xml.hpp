#pragma once
// The little XML the remote protocol carries (qXfer:threads, libraries-svr4, features):
// elements of one tag with their attributes, entities decoded. Not a general parser: no
// nesting is needed, only the attributes of each element, in document order.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ompdbg::tracer::rsp::internal {

using xml_attributes = std::map<std::string, std::string>;

/// Every `<TAG ...>` / `<TAG .../>` of `xml` in order, as its attributes. Throws on an
/// element that is not closed or an attribute value without its closing quote.
std::vector<xml_attributes> xml_elements(std::string_view xml, std::string_view tag);

}  // namespace ompdbg::tracer::rsp::internal
