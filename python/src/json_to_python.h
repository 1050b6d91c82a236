// nlohmann JSON values as plain Python objects (dict, list, str, int, float, bool, None). Numbers pass as
// the same double / integer the JSON holds, so a value from Python equals the CLI's to the last bit.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace asyncdp::python {

template <typename Json>
pybind11::object ToPython(const Json& value) {
  namespace py = pybind11;
  switch (value.type()) {
    case nlohmann::json::value_t::null: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(value.template get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(value.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(value.template get<uint64_t>());
    case nlohmann::json::value_t::number_float: return py::float_(value.template get<double>());
    case nlohmann::json::value_t::string: return py::str(value.template get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& item : value) list.append(ToPython(item));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;  // insertion-ordered, like ordered_json
      for (auto it = value.begin(); it != value.end(); ++it) dict[py::str(it.key())] = ToPython(it.value());
      return dict;
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded: break;
  }
  return py::none();
}

}  // namespace asyncdp::python
