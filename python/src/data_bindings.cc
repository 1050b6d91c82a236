// asyncdp.load_libsvm: the CLI's LIBSVM reader (data/libsvm.h) with its CSR arrays handed to numpy without a
// copy. The Dataset lives on the heap and each array holds a reference to it, so the arrays stay valid for
// as long as any of them (or the scipy matrix built on them) is alive.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>

#include "data/libsvm.h"
#include "python/src/bindings.h"

namespace asyncdp::python {
namespace py = pybind11;

namespace {

template <typename T>
py::array_t<T> View(const T* data, int64_t size, const py::capsule& owner) {
  return py::array_t<T>({size}, {static_cast<int64_t>(sizeof(T))}, data, owner);
}

py::dict LoadLibsvm(const std::string& path, int64_t num_features) {
  auto dataset = std::make_unique<data::Dataset>();
  {
    py::gil_scoped_release release;
    data::LibsvmOptions options;
    options.num_features = num_features;
    *dataset = data::ReadLibsvm(path, options);
    dataset->sparse.makeCompressed();
  }
  const data::Dataset* d = dataset.get();
  py::capsule owner(dataset.release(), [](void* p) { delete static_cast<data::Dataset*>(p); });
  const data::SparseMatrix& x = d->sparse;
  py::dict out;
  out["data"] = View(x.valuePtr(), x.nonZeros(), owner);
  out["indices"] = View(x.innerIndexPtr(), x.nonZeros(), owner);
  out["indptr"] = View(x.outerIndexPtr(), x.rows() + 1, owner);
  out["shape"] = py::make_tuple(x.rows(), x.cols());
  out["labels"] = View(d->labels.data(), static_cast<int64_t>(d->labels.size()), owner);
  out["class_names"] = d->class_names;
  return out;
}

}  // namespace

void RegisterData(py::module_& m) {
  m.def("load_libsvm", &LoadLibsvm, py::arg("path"), py::arg("num_features") = 0,
        "CSR arrays (data, indices, indptr, shape), labels and class names of a LIBSVM file.");
}

}  // namespace asyncdp::python
