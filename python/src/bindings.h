// The parts of the _asyncdp extension module, one Register function per file. The pure-Python package
// (python/asyncdp/) wraps these functions into the public API; nothing here is meant to be called directly.
#pragma once

#include <pybind11/pybind11.h>

namespace asyncdp::python {

void RegisterErrors(pybind11::module_& m);      // errors.cc: C++ InputError family -> asyncdp.errors
void RegisterAccounting(pybind11::module_& m);  // accounting_bindings.cc: account, calibrate, calc
void RegisterTraining(pybind11::module_& m);    // train_bindings.cc: train
void RegisterData(pybind11::module_& m);        // data_bindings.cc: load_libsvm

}  // namespace asyncdp::python
