"""Checking keyword arguments as the executable checks its options, and normalizing them into the
values the extension reads (str, int, float, bool and lists of them). A bad value raises InputError
naming the option as the executable does ("--global-batch" for global_batch=), since the messages
of the C++ readers name options that way too."""

import json
import numbers
import os

from ._errors import InputError


# The options' C++ type is int (32 bits).
_INT_LIMIT = 2**31


def option(name):
    """The executable's option for keyword `name`: global_batch -> --global-batch."""
    return "--" + name.replace("_", "-")


def refused(name, message):
    """The InputError of keyword `name` breaking the rule `message`."""
    return InputError(option(name), "", message)


def whole(name, value, minimum=None):
    """An int (at least `minimum`: 1 for counts, 0 where zero means none); None stays None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise refused(name, f"must be a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise refused(name, f"must be a number {'> 0' if minimum > 0 else '>= 0'}, got {value}")
    if not -_INT_LIMIT <= value < _INT_LIMIT:
        raise refused(name, f"must be between {-_INT_LIMIT} and {_INT_LIMIT - 1}, got {value}")
    return int(value)


def positive(name, value):
    """A number > 0; None stays None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise refused(name, f"must be a number > 0, got {value!r}")
    if not value > 0:
        raise refused(name, f"must be a number > 0, got {value}")
    return float(value)


def fraction(name, value):
    """A number in (0, 1]; None stays None."""
    number = positive(name, value)
    if number is not None and number > 1:
        raise refused(name, f"must be in (0, 1], got {value}")
    return number


def text(name, value):
    """A string or a path; None stays None."""
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if not isinstance(value, str):
        raise refused(name, f"must be a string, got {value!r}")
    return value


def texts(name, value):
    """A list of strings or paths (one alone is a list of one); None stays None."""
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    return [text(name, v) for v in value]


def one_of(name, value, accepted):
    """A string among `accepted`; None stays None."""
    value = text(name, value)
    if value is not None and value not in accepted:
        raise refused(name, f"must be one of {', '.join(accepted)}, got {value!r}")
    return value


def flag(name, value):
    if not isinstance(value, bool):
        raise refused(name, f"must be True or False, got {value!r}")
    return value


def size(name, value):
    """A size with a unit ("256 MiB"); a whole number is bytes."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return f"{value} B"
    return text(name, value)


def listed(value):
    """A list, tuple or one value alone as a list."""
    return list(value) if isinstance(value, (list, tuple)) else [value]


def sets(value):
    """``set=``: {"nics.bandwidth": "200 Gbps"} or ["nics.bandwidth=200 Gbps"] into the executable's
    PATH=VALUE edits; values that are not strings are written as JSON (true, 4, 0.5)."""
    if value is None:
        return None
    if isinstance(value, dict):
        return [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in value.items()]
    return texts("set", value)


def compact_plan(value):
    """A plan dict in compact form ("tp=8,pp=2"), switches as the plan JSON reads them (on/off)."""
    def word(v):
        return ("on" if v else "off") if isinstance(v, bool) else str(v)

    return ",".join(f"{k}={word(v)}" for k, v in value.items())
