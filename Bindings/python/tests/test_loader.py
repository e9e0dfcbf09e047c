"""Finding the library: OPTIMIST_LIBRARY first (and only), then the bundled copy, then the
checkout's build folders, then the system; a clear error listing every path tried."""

import ctypes.util
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import optimist
from optimist import _loader

from conftest import SRC, library_path


def run_import(env_value, extra=""):
    """Imports optimist in a fresh interpreter with OPTIMIST_LIBRARY set to ``env_value``."""
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(SRC)!r})
        try:
            import optimist
        except ImportError as e:
            print(type(e).__name__)
            print(e)
        else:
            print("loaded", optimist.library_path)
            {extra}
    """)
    env = dict(os.environ)
    env["OPTIMIST_LIBRARY"] = env_value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def test_env_var_is_used():
    out = run_import(library_path(), "print(optimist.Store().pending_count())")
    assert out.stdout.split() == ["loaded", library_path(), "0"], out.stderr


def test_bad_env_var_names_the_path_and_does_not_fall_back(tmp_path):
    bad = str(tmp_path / "nope" / "liboptimist.so")
    out = run_import(bad)
    lines = out.stdout.splitlines()
    assert lines[0] == "LibraryNotFoundError", out.stderr
    text = out.stdout
    assert f"OPTIMIST_LIBRARY={bad}: no such file" in text
    assert "no other location was searched" in text
    assert text.count(": ") == 1  # exactly one candidate tried


def test_env_var_pointing_at_a_non_library(tmp_path):
    junk = tmp_path / "liboptimist.so"
    junk.write_bytes(b"not an ELF file")
    out = run_import(str(junk))
    assert out.stdout.splitlines()[0] == "LibraryNotFoundError", out.stderr
    assert str(junk) in out.stdout


def test_library_without_the_symbols_names_the_missing_one():
    libm = ctypes.util.find_library("m")
    assert libm
    out = run_import(libm)
    assert out.stdout.splitlines()[0] == "MissingSymbolError", out.stderr
    assert "optimist_version" in out.stdout  # the first entry of the table


def test_candidate_order_without_env(monkeypatch, tmp_path):
    monkeypatch.delenv("OPTIMIST_LIBRARY", raising=False)
    kinds = [k for k, _ in _loader.candidates()]
    assert kinds[0] == "bundled"
    assert kinds.index("checkout") < kinds.index("system")  # this test runs from a checkout
    paths = [p for _, p in _loader.candidates()]
    assert paths[0].endswith(os.path.join("optimist", "_lib", "liboptimist.so"))
    root = _loader._checkout_root()
    assert os.path.join(str(root), "build", "liboptimist.so") in paths
    assert os.path.join(str(root), ".build", "release", "liboptimist.so") in paths
    assert "liboptimist.so.1" in paths


def test_bundled_copy_is_found(monkeypatch, tmp_path):
    monkeypatch.delenv("OPTIMIST_LIBRARY", raising=False)
    (tmp_path / "_lib").mkdir()
    shutil.copy(library_path(), tmp_path / "_lib" / "liboptimist.so")
    monkeypatch.setattr(_loader, "_PACKAGE_DIR", tmp_path)
    _, where = _loader.load_library()
    assert where == str(tmp_path / "_lib" / "liboptimist.so")


def test_checkout_build_folder_is_found(monkeypatch, tmp_path):
    monkeypatch.delenv("OPTIMIST_LIBRARY", raising=False)
    monkeypatch.setattr(_loader, "_PACKAGE_DIR", tmp_path / "pkg")  # no bundled copy
    (tmp_path / ".build" / "release").mkdir(parents=True)
    shutil.copy(library_path(), tmp_path / ".build" / "release" / "liboptimist.so")
    monkeypatch.setattr(_loader, "_checkout_root", lambda: tmp_path)
    _, where = _loader.load_library()
    assert where == str(tmp_path / ".build" / "release" / "liboptimist.so")


def test_nothing_found_lists_every_path(tmp_path):
    """In a fresh process (so no liboptimist is loaded yet, which the dynamic loader would
    otherwise match by soname), with the bundled and checkout locations empty."""
    code = textwrap.dedent(f"""
        import ctypes.util, importlib.util, pathlib, sys
        spec = importlib.util.spec_from_file_location("loader", {str(SRC / "optimist" / "_loader.py")!r})
        loader = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loader)
        loader._PACKAGE_DIR = pathlib.Path({str(tmp_path / "pkg")!r})
        loader._checkout_root = lambda: pathlib.Path({str(tmp_path)!r})
        ctypes.util.find_library = lambda name: None
        try:
            loader.load_library()
        except loader.LibraryNotFoundError as e:
            print(len(e.tried), len(loader.candidates()))
            print(e)
        else:
            print("loaded")
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("OPTIMIST_LIBRARY", "LD_LIBRARY_PATH")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.stdout.strip() == "loaded":
        pytest.skip("a liboptimist is installed system-wide, so the search cannot come up empty")
    first, _, text = out.stdout.partition("\n")
    tried, total = first.split()
    assert tried == total and int(total) >= 5, out.stdout + out.stderr
    assert text.startswith("could not load liboptimist; tried:")
    for where in (tmp_path / "pkg" / "_lib" / "liboptimist.so", tmp_path / "build" / "liboptimist.so",
                  tmp_path / ".build" / "release" / "liboptimist.so", tmp_path / ".build" / "debug" / "liboptimist.so"):
        assert f"{where}: no such file" in text
    assert "liboptimist.so.1:" in text
    assert "OPTIMIST_LIBRARY" in text


def test_library_path_is_reported():
    assert os.path.exists(optimist.library_path)
