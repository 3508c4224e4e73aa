"""Workloads, topologies and plans given as paths, shipped names or dicts, turned into the paths the
executable's readers take. A dict is written to a temporary JSON file and read by the same reader
as a file; its errors then name the argument ("workload (dict)") instead of that file."""

import difflib
import json
import os
import shutil
import tempfile

from . import _options
from ._errors import InputError
from ._stepcast import source_dir

# Shipped files by kind: the folder of the clone the module was built from.
_FOLDERS = {"workload": "workloads", "topology": "topologies"}


def shipped_names(kind):
    """The names of the shipped files of `kind` ("workload" or "topology"), sorted."""
    folder = os.path.join(source_dir, _FOLDERS[kind])
    return sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".json"))


class Inputs:
    """The files of one call. Use as a context manager: temporary files go when it closes."""

    def __init__(self):
        self._folder = None
        self._labels = {}  # temporary path -> the argument it stands for

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)

    def _write(self, name, value):
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="stepcast-")
        path = os.path.join(self._folder, f"{name}-{len(self._labels)}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f)
        self._labels[path] = f"{name} (dict)"
        return path

    def data_file(self, kind, value):
        """A workload or topology: a dict, a path, or a shipped name ("llama3-70b", "dgx-h100").
        A name becomes the relative path the executable accepts ("workloads/llama3-70b.json")."""
        if value is None:
            return None
        if isinstance(value, dict):
            return self._write(kind, value)
        value = _options.text(kind, value)
        if os.path.exists(value) or value.endswith(".json") or os.sep in value:
            return value
        relative = f"{_FOLDERS[kind]}/{value}.json"
        if os.path.exists(os.path.join(source_dir, relative)):
            return relative
        names = shipped_names(kind)
        near = difflib.get_close_matches(value, names, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise InputError(value, "", f"no such file, nor a shipped {kind} of that name{hint} "
                                    f"(shipped: {', '.join(names)})")

    def plan(self, value):
        """A plan: compact form ("tp=8,pp=2"), a plan JSON path, or a dict (the plan JSON)."""
        if isinstance(value, dict):
            return self._write("plan", value)
        return _options.text("plan", value)

    def call(self, function, options):
        """`function(options)` with errors about a temporary file told of the argument instead."""
        try:
            return function({k: v for k, v in options.items() if v is not None})
        except InputError as e:
            if not any(path in str(e) for path in self._labels):
                raise
            file, message = e.file, e.message
            for path, label in self._labels.items():
                file, message = file.replace(path, label), message.replace(path, label)
            raise InputError(file, e.pointer, message) from None
