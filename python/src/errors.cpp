// Translating stepcast's C++ error classes into the Python package's exceptions.
#include "errors.hpp"

#include <pybind11/pybind11.h>

#include <exception>

#include "stepcast/core/errors.hpp"

namespace stepcast::python {

namespace py = pybind11;

namespace {

/// Raises `stepcast._errors.<name>(args...)` as the pending Python error.
template <typename... Args>
void raise(const char* name, Args&&... args) {
  const py::object type = py::module_::import("stepcast._errors").attr(name);
  const py::object error = type(std::forward<Args>(args)...);
  PyErr_SetObject(type.ptr(), error.ptr());
}

}  // namespace

void register_error_translation() {
  py::register_exception_translator([](std::exception_ptr pending) {
    if (!pending) return;
    try {
      std::rethrow_exception(pending);
    } catch (const InputError& e) {
      raise("InputError", e.file(), e.pointer(), e.message());
    } catch (const InfeasibleError& e) {
      raise("Infeasible", std::string(e.what()));
    }
  });
}

}  // namespace stepcast::python
