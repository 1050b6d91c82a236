// C++ input errors become the exceptions of asyncdp.errors (python/asyncdp/errors.py), carrying the same
// "where: message" text the CLI prints (FILE:LINE:COL, FILE:byte OFFSET or the key path) and its parts.
#include <pybind11/pybind11.h>

#include <exception>
#include <string>

#include "core/error.h"
#include "python/src/bindings.h"

namespace asyncdp::python {
namespace py = pybind11;

namespace {

// A message may quote the offending bytes of a binary or UTF-16 file, which are not UTF-8: they are kept
// as \xNN escapes, so the documented exception (with its file:line:col) is raised, never a
// UnicodeDecodeError from the conversion itself.
py::str Text(const std::string& text) {
  PyObject* decoded = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
}

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
      Raise("ParseError", py::make_tuple(Text(e.what()), Text(e.where()), Text(e.message()), Text(e.file()), e.line(),
                                         e.column()));
    } catch (const BinaryFormatError& e) {
      Raise("BinaryFormatError",
            py::make_tuple(Text(e.what()), Text(e.where()), Text(e.message()), Text(e.file()), e.byte_offset()));
    } catch (const ConfigError& e) {
      Raise("ConfigError", py::make_tuple(Text(e.what()), Text(e.where()), Text(e.message())));
    } catch (const InputError& e) {
      Raise("InputError", py::make_tuple(Text(e.what()), Text(e.where()), Text(e.message())));
    }
  });
}

}  // namespace asyncdp::python
