// C++ input errors become the exceptions of asyncdp.errors (python/asyncdp/errors.py), carrying the same
// "where: message" text the CLI prints (FILE:LINE:COL, FILE:byte OFFSET or the key path) and its parts.
#include <pybind11/pybind11.h>

#include <exception>

#include "core/error.h"
#include "python/src/bindings.h"

namespace asyncdp::python {
namespace py = pybind11;

namespace {

void Raise(const char* name, const py::tuple& args) {
  const py::object type = py::module_::import("asyncdp.errors").attr(name);
  const py::object instance = type(*args);
  PyErr_SetObject(type.ptr(), instance.ptr());
}

}  // namespace

void RegisterErrors(py::module_& /*m*/) {
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const ParseError& e) {
      Raise("ParseError", py::make_tuple(e.what(), e.where(), e.message(), e.file(), e.line(), e.column()));
    } catch (const BinaryFormatError& e) {
      Raise("BinaryFormatError", py::make_tuple(e.what(), e.where(), e.message(), e.file(), e.byte_offset()));
    } catch (const ConfigError& e) {
      Raise("ConfigError", py::make_tuple(e.what(), e.where(), e.message()));
    } catch (const InputError& e) {
      Raise("InputError", py::make_tuple(e.what(), e.where(), e.message()));
    }
  });
}

}  // namespace asyncdp::python
