"""One word per concept, kept so: every name the C header and the Python package export is in
``docs/glossary.md``, and no public name of the C, Python or Swift surface uses a spelling the
glossary retired. A new function, method or label that is not in the glossary, or that says
"live" for "not yet ended", "coll" in Swift, or a time without its unit, fails here."""

import inspect
import re

import pytest

import optimist
from conftest import ROOT

GLOSSARY = (ROOT / "docs" / "glossary.md").read_text()
HEADER = (ROOT / "Include" / "optimist.h").read_text()
# Every `code span` of the glossary, split into the identifiers it holds.
GLOSSARY_WORDS = {w for span in re.findall(r"`([^`]+)`", GLOSSARY) for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span)}


def c_functions():
    """(name, [parameter names]) of every function the header declares."""
    body = re.sub(r"/\*.*?\*/", "", HEADER, flags=re.S)
    out = []
    for m in re.finditer(r"\b(optimist_[a-z0-9_]+)\s*\(([^;{)]*(?:\([^)]*\)[^;{)]*)*)\)\s*;", body):
        params = []
        for p in m.group(2).split(","):
            p = re.sub(r"\(\s*\*\s*(\w+)\s*\)\s*\(.*", r"\1", p.strip())  # function pointer: its name
            words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", p)
            if words and words != ["void"]:
                params.append(words[-1])
        out.append((m.group(1), params))
    return out


def python_methods():
    """(name, [parameter names]) of every public method of Store."""
    out = []
    for name, fn in inspect.getmembers(optimist.Store, callable):
        if not name.startswith("_"):
            out.append((name, [p for p in inspect.signature(fn).parameters if p != "self"]))
    return out


def swift_public_functions():
    """(file, name, [argument labels]) of the public functions of the Swift modules users import."""
    out = []
    for module in ("Optimist", "OptimistCore"):
        for path in sorted((ROOT / "Sources" / module).rglob("*.swift")):
            text = path.read_text()
            for m in re.finditer(r"public\s+(?:static\s+|mutating\s+|nonisolated\s+)*func\s+(\w+)\s*(?:<[^>]*>)?\(([^)]*)\)", text):
                labels = [p.strip().split(":")[0].split()[0] for p in m.group(2).split(",") if ":" in p]
                out.append((path.relative_to(ROOT), m.group(1), labels))
            for m in re.finditer(r"public\s+(?:static\s+)?(?:var|let)\s+(\w+)", text):
                out.append((path.relative_to(ROOT), m.group(1), []))
    return out


def words(identifier):
    """The words of a snake_case or camelCase identifier, lower-cased."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", identifier)]


def test_the_parsers_see_the_surfaces():
    # Guards the tests below against passing on nothing.
    assert len(c_functions()) >= 45
    assert len(python_methods()) >= 30
    assert len(swift_public_functions()) >= 100
    assert ("optimist_mutate", ["s", "ops", "dedupe_key", "out_id"]) in c_functions() or any(
        n == "optimist_mutate" and "out_id" in p for n, p in c_functions())


@pytest.mark.parametrize("name", [n for n, _ in c_functions()])
def test_every_c_function_is_in_the_glossary(name):
    assert name in GLOSSARY_WORDS, f"{name} is declared in optimist.h but not named in docs/glossary.md"


@pytest.mark.parametrize("name", sorted(set(optimist.__all__) | {n for n, _ in python_methods()}))
def test_every_python_name_is_in_the_glossary(name):
    assert name in GLOSSARY_WORDS, f"optimist.{name} is public but not named in docs/glossary.md"


# "live" is the observation API's word for "kept up to date"; for "not yet ended" it is retired.
LIVE_ALLOWED = {"LiveRecord", "liveRecord", "LiveView", "liveView", "live", "isLive"}


def test_no_public_name_says_live_for_not_yet_ended():
    bad = [n for n, _ in c_functions() if "live" in words(n)]
    bad += [n for n in list(optimist.__all__) + [m for m, _ in python_methods()] if "live" in words(n)]
    bad += [f"{f}: {n}" for f, n, _ in swift_public_functions() if "live" in words(n) and n not in LIVE_ALLOWED]
    assert bad == []


def test_the_collection_is_coll_in_c_and_python_and_collection_in_swift():
    bad = [f"C {n}({p})" for n, ps in c_functions() for p in ps if p in ("collection", "collection_name", "col")]
    bad += [f"Python {n}({p})" for n, ps in python_methods() for p in ps if p in ("collection", "col")]
    bad += [f"Swift {f}: {n}({label}:)" for f, n, labels in swift_public_functions() for label in labels
            if label in ("coll", "col")]
    assert bad == []
    # and the spellings the tests expect are really used
    assert any("coll" in ps for _, ps in c_functions())
    assert any("coll" in ps for _, ps in python_methods())
    assert any("collection" in labels for _, _, labels in swift_public_functions())


TIME_WORDS = {"now", "at", "age", "delay", "timeout", "interval", "time", "deadline"}


def test_c_and_python_times_carry_their_unit():
    """C and Python spell every time as milliseconds (`now_ms`); Python's `sync_wait_idle`
    takes seconds and says so (`timeout_s`)."""
    params = [("C", n, p) for n, ps in c_functions() for p in ps] + \
             [("Python", n, p) for n, ps in python_methods() for p in ps]
    bad = [f"{host} {n}({p})" for host, n, p in params
           if TIME_WORDS & set(words(p)) and not (p.endswith("_ms") or p == "timeout_s")]
    assert bad == []
    assert ("Python", "sync_wait_idle", "timeout_s") in params
