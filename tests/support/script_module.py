"""A script of scripts/ (a command, its file without .py) loaded as a module, so a test can call
its functions; scripts/ goes on the import path for the modules the scripts share."""
import importlib.machinery
import importlib.util
import os
import sys

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts")


def load_script(file_name):
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    name = file_name.replace("-", "_")
    loader = importlib.machinery.SourceFileLoader(name, os.path.join(SCRIPTS, file_name))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(module)
    return module
