"""Finding and loading ``liboptimist``.

The search order is part of the package's documented behaviour (see the package docstring
and README), so it lives in one place:

1. ``OPTIMIST_LIBRARY``: when set, the one file it names is loaded and nothing else is tried,
   so a wrong value is reported rather than silently replaced by another copy. (A bare file
   name without a directory, e.g. ``liboptimist.so.1``, is handed to the dynamic loader.)
2. The copy bundled inside the package at install time: ``optimist/_lib/liboptimist.so``.
3. The project's own build folders, when this package runs from a source checkout:
   ``build/``, ``.build/release/``, ``.build/debug/`` at the checkout's root.
4. The system: ``ctypes.util.find_library("optimist")``, then ``liboptimist.so.1`` and
   ``liboptimist.so`` through the dynamic loader's own search (``LD_LIBRARY_PATH``,
   ``ldconfig`` cache, default directories).

When nothing loads, :class:`LibraryNotFoundError` lists every candidate tried and why it
failed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from pathlib import Path
from typing import List, Optional, Tuple

__all__ = ["ENV_VAR", "LibraryNotFoundError", "candidates", "load_library"]

#: The environment variable that names the library file to load.
ENV_VAR = "OPTIMIST_LIBRARY"

_PACKAGE_DIR = Path(__file__).resolve().parent


def _file_name() -> str:
    """The platform's file name for the shared library."""
    if sys.platform == "darwin":
        return "liboptimist.dylib"
    if sys.platform == "win32":
        return "optimist.dll"
    return "liboptimist.so"


class LibraryNotFoundError(ImportError):
    """No usable ``liboptimist`` was found; the message lists every path tried.

    ``tried`` holds ``(candidate, reason)`` pairs in search order.
    """

    def __init__(self, tried: List[Tuple[str, str]], hint: str = "") -> None:
        self.tried = tried
        lines = ["could not load liboptimist; tried:"]
        lines += [f"  {where}: {why}" for where, why in tried]
        lines.append(
            f"Set {ENV_VAR} to the path of liboptimist, or build it (see Bindings/python/README.md)."
        )
        if hint:
            lines.append(hint)
        super().__init__("\n".join(lines))


def _checkout_root() -> Optional[Path]:
    """The source checkout this package sits in (``src/optimist`` under ``Bindings/python``),
    or None when it is installed elsewhere."""
    root = _PACKAGE_DIR.parents[3] if len(_PACKAGE_DIR.parents) > 3 else None
    if root is not None and (root / "Package.swift").is_file() and (root / "Bindings" / "python").is_dir():
        return root
    return None


def candidates() -> List[Tuple[str, str]]:
    """Every place the search looks, in order, as ``(kind, path-or-name)`` pairs.

    ``kind`` is ``"env"``, ``"bundled"``, ``"checkout"`` or ``"system"``. A system entry is a
    bare name handed to the dynamic loader.
    """
    name = _file_name()
    env = os.environ.get(ENV_VAR)
    if env:
        return [("env", env)]
    out: List[Tuple[str, str]] = [("bundled", str(_PACKAGE_DIR / "_lib" / name))]
    root = _checkout_root()
    if root is not None:
        for folder in ("build", ".build/release", ".build/debug"):
            out.append(("checkout", str(root / folder / name)))
    found = ctypes.util.find_library("optimist")
    if found:
        out.append(("system", found))
    if sys.platform.startswith("linux"):
        out.append(("system", "liboptimist.so.1"))
    out.append(("system", name))
    return out


def load_library() -> Tuple[ctypes.CDLL, str]:
    """Loads the first candidate that the dynamic loader accepts.

    Returns the library and the path or name it was loaded from.

    Raises:
        LibraryNotFoundError: nothing loaded; the message lists every candidate and why.
    """
    tried: List[Tuple[str, str]] = []
    for kind, where in candidates():
        # A bare name (no directory part) is left to the dynamic loader's own search.
        is_path = kind != "system" and os.path.dirname(where) != ""
        if is_path and not os.path.exists(where):
            label = f"{ENV_VAR}={where}" if kind == "env" else where
            tried.append((label, "no such file"))
            continue
        try:
            return ctypes.CDLL(where), where
        except OSError as e:
            label = f"{ENV_VAR}={where}" if kind == "env" else where
            tried.append((label, str(e) or type(e).__name__))
    hint = ""
    if os.environ.get(ENV_VAR):
        hint = f"({ENV_VAR} is set, so no other location was searched.)"
    raise LibraryNotFoundError(tried, hint)
