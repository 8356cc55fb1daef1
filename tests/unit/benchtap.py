# SPDX-License-Identifier: BSD-2-Clause
"""A minimal TAP runner for the bench/ tests (stdlib only): each function
registered with @case is one "ok N - name" / "not ok N - name" line."""

import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP_SRC, "bench"))
# make check runs tests from the top build directory (top_builddir is set there)
BUILD = os.path.abspath(os.environ.get("top_builddir", "."))

_cases = []


class Skip(Exception):
    """Raised by a case that cannot run here; reported as TAP SKIP."""


def load_script(name, module):
    """bench/NAME (a script without .py) as a module named module."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader(module, os.path.join(TOP_SRC, "bench", name))
    spec = importlib.util.spec_from_loader(module, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def case(fn):
    _cases.append(fn)
    return fn


def run():
    print(f"1..{len(_cases)}", flush=True)
    failed = 0
    for n, fn in enumerate(_cases, 1):
        name = (fn.__doc__ or fn.__name__).strip().splitlines()[0]
        try:
            fn()
            print(f"ok {n} - {name}", flush=True)
        except Skip as e:
            print(f"ok {n} - {name} # SKIP {e}", flush=True)
        except Exception:  # any failure is one "not ok", never a crash of the file
            failed += 1
            print(f"not ok {n} - {name}")
            for line in traceback.format_exc().rstrip().splitlines():
                print(f"# {line}")
            sys.stdout.flush()
    return 0


def eq(a, b, what=""):
    if a != b:
        raise AssertionError(f"{what}: {a!r} != {b!r}" if what else f"{a!r} != {b!r}")


def raises(exc, fn, *args, match=None):
    try:
        fn(*args)
    except exc as e:
        if match and match not in str(e):
            raise AssertionError(f"message {str(e)!r} lacks {match!r}") from None
        return e
    raise AssertionError(f"{fn.__name__}{args} did not raise {exc.__name__}")
