"""Build hook: bundle a built ``liboptimist`` into the package when one can be found.

Everything else about the package is declared in ``pyproject.toml``. At build time this looks
for the library, in order: the file named by ``OPTIMIST_LIBRARY``, then the project's build
folders at the checkout root (``build/liboptimist.so``, ``.build/release/liboptimist.so``).
The first that exists is copied to ``optimist/_lib/liboptimist.so`` in the built package, and
the wheel is then tagged for this platform (it holds native code). When none exists, the
package is pure Python and finds the library at import time (see ``optimist/_loader.py``).

Where a C compiler and Python's headers are, it also builds ``optimist._speedups``, the optional
accelerator of the hot calls (see ``optimist/_fast.py``). It is compiled against
``Include/optimist.h`` at the checkout root, and a build that fails only leaves it out: the
package then runs on ctypes alone. ``python setup.py build_ext --inplace`` builds it into
``src/optimist/`` for the tests, which import the package from there.

The package's version is the library's: ``OPTIMIST_VERSION`` in ``Include/optimist.h`` at the
checkout root (or, building from an sdist, the version its PKG-INFO recorded). It is written
into the built package as ``optimist/_version.py``.
"""

import os
import re
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NAME = "liboptimist.dylib" if sys.platform == "darwin" else "liboptimist.so"


def find_built_library():
    """The library to bundle, or None."""
    env = os.environ.get("OPTIMIST_LIBRARY")
    if env:
        # A library named explicitly is the one meant: a wrong path is an error, not a
        # reason to bundle whatever a build folder happens to hold.
        if not Path(env).is_file():
            raise SystemExit(f"OPTIMIST_LIBRARY={env}: no such file")
        return Path(env)
    candidates = [ROOT / "build" / NAME, ROOT / ".build" / "release" / NAME]
    for c in candidates:
        if c.is_file():
            return c
    return None


LIBRARY = find_built_library()


def read_version():
    """OPTIMIST_VERSION of the header, else the version an sdist's PKG-INFO holds."""
    header = ROOT / "Include" / "optimist.h"
    if header.is_file():
        m = re.search(r'^#define OPTIMIST_VERSION\s+"([0-9]+\.[0-9]+\.[0-9]+)"', header.read_text(), re.M)
        if not m:
            raise SystemExit(f"{header}: no #define OPTIMIST_VERSION \"X.Y.Z\"")
        return m.group(1)
    info = HERE / "PKG-INFO"
    if info.is_file():
        m = re.search(r"^Version:\s*(\S+)", info.read_text(), re.M)
        if m:
            return m.group(1)
    raise SystemExit(f"no {header} (and no PKG-INFO): cannot tell the package's version")


VERSION = read_version()


class BuildPyBundlingLibrary(build_py):
    """``build_py`` that also copies the found library into ``optimist/_lib/``."""

    def run(self):
        super().run()
        (Path(self.build_lib) / "optimist" / "_version.py").write_text(
            f'"""Written by setup.py from Include/optimist.h."""\n__version__ = "{VERSION}"\n')
        dest = Path(self.build_lib) / "optimist" / "_lib"
        if dest.exists():
            shutil.rmtree(dest)  # never ship a copy left over from an earlier build
        if LIBRARY is not None:
            dest.mkdir(parents=True)
            shutil.copy2(LIBRARY, dest / NAME)
            print(f"optimist: bundled {LIBRARY}", file=sys.stderr)
        else:
            print("optimist: no built liboptimist found; not bundling one", file=sys.stderr)


def speedups():
    """The accelerator's extension, when the header it compiles against is here (a checkout)."""
    include = ROOT / "Include"
    if not (include / "optimist.h").is_file():
        return []
    return [Extension("optimist._speedups", sources=["src/optimist/_speedups.c"],
                      include_dirs=[str(include)], optional=True)]


class MaybeBinaryDistribution(Distribution):
    """A distribution that counts as platform-specific when it bundles the library (or builds
    the accelerator)."""

    def has_ext_modules(self):
        return LIBRARY is not None or bool(self.ext_modules)


setup(version=VERSION, cmdclass={"build_py": BuildPyBundlingLibrary}, distclass=MaybeBinaryDistribution,
      ext_modules=speedups())
