"""The exceptions stepcast raises: one class per exit code of the ``stepcast`` executable."""


def _locate(file, pointer, message):
    # The executable's "file:/json/pointer: message", parts that are empty left out.
    if file and pointer:
        return f"{file}:{pointer}: {message}"
    if file or pointer:
        return f"{file or pointer}: {message}"
    return message


class Error(Exception):
    """Base class of stepcast's exceptions."""


class InputError(Error, ValueError):
    """Bad input (the executable's exit code 2): a file, JSON path or argument that breaks a rule.

    ``file`` names the file or argument, ``pointer`` the JSON pointer inside it (may be empty),
    ``message`` the rule and the numbers that break it.
    """

    def __init__(self, file, pointer, message):
        super().__init__(_locate(file, pointer, message))
        self.file = file
        self.pointer = pointer
        self.message = message

    def __reduce__(self):
        return (type(self), (self.file, self.pointer, self.message))


# Where each command's JSON keeps the memory a GPU needs (predict, memory, simulate).
_MEMORY_KEYS = ("memory_per_gpu_bytes", "total_bytes_per_gpu", "memory_bytes_per_gpu")


class Infeasible(Error):
    """A well-formed request that cannot be met (the executable's exit code 3): the plan does not fit.

    ``result`` is the dict the command made before refusing (what the executable prints before it
    exits 3); the memory figures are copied from it: ``memory_per_gpu_bytes``, ``gpu_memory_bytes``,
    ``headroom_bytes`` (negative when short) and ``memory_margin_bytes``.
    """

    def __init__(self, message, result=None):
        super().__init__(message)
        self.message = message
        self.result = result
        found = result or {}
        self.memory_per_gpu_bytes = next((found[k] for k in _MEMORY_KEYS if k in found), None)
        self.gpu_memory_bytes = found.get("gpu_memory_bytes")
        self.headroom_bytes = found.get("headroom_bytes")
        self.memory_margin_bytes = found.get("memory_margin_bytes")

    def __reduce__(self):
        return (type(self), (self.message, self.result))
