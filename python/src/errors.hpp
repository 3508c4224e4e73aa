// stepcast's error classes as the Python package's exceptions (stepcast/_errors.py): InputError
// with its file, JSON pointer and rule, Infeasible with its message; anything else stays a
// RuntimeError, as the executable's exit code 70 does.
#pragma once

namespace stepcast::python {

/// Registers the translation with pybind11; call once when the module loads.
void register_error_translation();

}  // namespace stepcast::python
