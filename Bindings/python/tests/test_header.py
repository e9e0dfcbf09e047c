"""The ctypes table in ``_ffi.SIGNATURES`` against ``Include/optimist.h``: the same functions
with the same types, and the same constants, so the bindings cannot drift from the header."""

import ctypes
import re

import pytest

from optimist import _error, _ffi

from conftest import ROOT

HEADER = ROOT / "Include" / "optimist.h"

C_TO_CTYPES = {
    "void": None,
    "int": ctypes.c_int,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
    "double": ctypes.c_double,
    "const char *": ctypes.c_char_p,
    "void *": ctypes.c_void_p,
    "optimist_store *": ctypes.c_void_p,
    "optimist_query *": ctypes.c_void_p,
    "optimist_batch *": ctypes.c_void_p,
    "const optimist_batch *": ctypes.c_void_p,
    # Out-parameters that receive a handle or a library-owned string keep the raw address.
    "optimist_store **": ctypes.POINTER(ctypes.c_void_p),
    "optimist_batch **": ctypes.POINTER(ctypes.c_void_p),
    "optimist_query **": ctypes.POINTER(ctypes.c_void_p),
    "char **": ctypes.POINTER(ctypes.c_void_p),
    # A buffer the library writes into (optimist_get_into).
    "char *": ctypes.POINTER(ctypes.c_char),
    "size_t *": ctypes.POINTER(ctypes.c_size_t),
    "int *": ctypes.POINTER(ctypes.c_int),
    "uint64_t *": ctypes.POINTER(ctypes.c_uint64),
    "double *": ctypes.POINTER(ctypes.c_double),
    "optimist_listener": _ffi.LISTENER,
    "optimist_query_listener": _ffi.QUERY_LISTENER,
    "optimist_query_numbered_listener": _ffi.QUERY_NUMBERED_LISTENER,
    "const optimist_field *": ctypes.POINTER(_ffi.FieldStruct),
    # The sync options are passed with byref(); a header array is (c_char_p * (n + 1)) or None.
    "const optimist_sync_options *": ctypes.c_void_p,
    "const optimist_open_options *": ctypes.c_void_p,
    "const optimist_mutate_options *": ctypes.c_void_p,
    "const char *const *": ctypes.POINTER(ctypes.c_char_p),
}


def declarations():
    """``name -> (return type, [parameter types])`` for every function in the header."""
    text = re.sub(r"/\*.*?\*/", " ", HEADER.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    out = {}
    for m in re.finditer(r"^([A-Za-z_][\w ]*?\**)\s*(optimist_\w+)\s*\(([^;]*?)\)\s*;", text, flags=re.M):
        ret, name, params = m.group(1).strip(), m.group(2), " ".join(m.group(3).split())
        if ret.startswith("typedef"):
            continue
        types = []
        if params != "void":
            for p in params.split(","):
                p = p.strip()
                t = re.sub(r"\s*\b\w+$", "", p) if not p.endswith("*") else p  # drop the name
                t = re.sub(r"\s*\*", " *", t).replace("* *", "**").strip()
                types.append(t)
        out[name] = (ret, types)
    return out


def test_header_parsed():
    assert len(declarations()) >= 35


def test_same_functions_as_the_header():
    assert set(declarations()) == set(_ffi.SIGNATURES)


@pytest.mark.parametrize("name", sorted(_ffi.SIGNATURES))
def test_same_types_as_the_header(name):
    decl = declarations()
    assert name in decl
    ret, params = decl[name]
    restype, argtypes = _ffi.SIGNATURES[name]
    assert C_TO_CTYPES[ret] is restype, (ret, restype)
    assert [C_TO_CTYPES[p] for p in params] == argtypes, (params, argtypes)


def defines():
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r"^#define (OPTIMIST_\w+)\s+(-?\d+)\b", HEADER.read_text(), flags=re.M)}


def test_same_constants_as_the_header():
    d = defines()
    for code, cls in _error.CLASSES.items():
        assert code == cls.default_code
    names = {"ERROR": _error.InternalError, "MISUSE": _error.MisuseError, "NOTFOUND": _error.NotFoundError,
             "STATE": _error.StateError, "INVALID": _error.InvalidError, "DUPLICATE": _error.DuplicateError,
             "IO": _error.StoreIOError, "CORRUPT": _error.CorruptError, "BUSY": _error.BusyError}
    for n, cls in names.items():
        assert d["OPTIMIST_" + n] == cls.default_code == getattr(_ffi, n)
    assert d["OPTIMIST_OK"] == _ffi.OK == 0
    for value, status in _ffi.STATUSES.items():
        assert d["OPTIMIST_" + status.upper()] == value
    for value, cause in _ffi.CAUSES.items():
        assert d["OPTIMIST_CAUSE_" + cause.upper()] == value
    assert sorted(v for k, v in d.items() if k.startswith("OPTIMIST_CAUSE_")) == sorted(_ffi.CAUSES)
    for value, status in _ffi.RECORD_STATUSES.items():
        assert d["OPTIMIST_RECORD_" + status.upper()] == value
    assert d["OPTIMIST_SYNC_OPTIONS_VERSION"] == _ffi.SYNC_OPTIONS_VERSION
    assert d["OPTIMIST_OPEN_OPTIONS_VERSION"] == _ffi.OPEN_OPTIONS_VERSION
    assert d["OPTIMIST_MUTATE_OPTIONS_VERSION"] == _ffi.MUTATE_OPTIONS_VERSION
    for policy, value in _ffi.POLICIES.items():
        assert d["OPTIMIST_POLICY_" + policy.upper()] == value
    for name, value in _ffi.FIELD_TYPES.items():
        assert d["OPTIMIST_FIELD_" + name.upper()] == value


def test_change_struct_layout():
    """optimist_change: three pointers then two ints (the header's order)."""
    fields = [f for f, _ in _ffi.ChangeStruct._fields_]
    assert fields == ["collection", "key", "value_json", "pending", "cause"]
    p = ctypes.sizeof(ctypes.c_void_p)
    assert ctypes.sizeof(_ffi.ChangeStruct) == 3 * p + 8
    body = HEADER.read_text()
    m = re.search(r"typedef struct optimist_change \{(.*?)\} optimist_change;", body, flags=re.S)
    assert m
    members = re.findall(r"(const char \*|int) ?(\w+);", re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S))
    assert [n for _, n in members] == fields


def test_field_struct_layout():
    """optimist_field: two pointers, a double, an int (the header's order)."""
    fields = [f for f, _ in _ffi.FieldStruct._fields_]
    assert fields == ["name", "text", "number", "type"]
    assert ctypes.sizeof(_ffi.FieldStruct) == 32
    m = re.search(r"typedef struct optimist_field \{(.*?)\} optimist_field;", HEADER.read_text(), flags=re.S)
    assert m
    members = re.findall(r"(const char \*|double|int) ?(\w+);", m.group(1))
    assert [n for _, n in members] == fields


def test_fields_through_ctypes_read_back_as_json():
    """A record given as typed fields from another host reads back as the same JSON."""
    import optimist
    from optimist import _ffi as f
    lib = f.lib
    T = f.FIELD_TYPES
    arr = (f.FieldStruct * 4)(
        f.FieldStruct(b"habit", b"run \"daily\"", 0, T["text"]),
        f.FieldStruct(b"done", None, 1, T["bool"]),
        f.FieldStruct(b"at", None, 1763770000123, T["number"]),
        f.FieldStruct(b"gone", None, 0, T["null"]),
    )
    with optimist.Store() as store:
        b = ctypes.c_void_p()
        assert lib.optimist_batch_new(ctypes.byref(b)) == 0
        try:
            assert lib.optimist_batch_put_fields(b, b"logs", b"k", arr, 4) == 0
            bad = (f.FieldStruct * 1)(f.FieldStruct(b"n", None, float("nan"), T["number"]))
            assert lib.optimist_batch_put_fields(b, b"logs", b"k", bad, 1) == f.INVALID
            out = ctypes.c_uint64()
            assert lib.optimist_mutate(store._h, b, None, ctypes.byref(out)) == 0
        finally:
            lib.optimist_batch_free(b)
        assert store.get("logs", "k") == {"habit": 'run "daily"', "done": True, "at": 1763770000123, "gone": None}


def test_sync_options_layout():
    """optimist_sync_options: the header's members in order, with the header's C types, and
    OPTIMIST_SYNC_OPTIONS_INIT's defaults are the Python defaults."""
    body = re.sub(r"/\*.*?\*/", " ", HEADER.read_text(), flags=re.S)
    m = re.search(r"typedef struct optimist_sync_options \{(.*?)\} optimist_sync_options;", body, flags=re.S)
    assert m
    members = [" ".join(x.split()) for x in m.group(1).split(";") if x.strip()]
    names = [re.search(r"(\w+)$", x).group(1) for x in members]
    assert names == [f for f, _ in _ffi.SyncOptions._fields_]
    c_types = {
        "unsigned int": ctypes.c_uint, "const char *": ctypes.c_char_p,
        "const char *const *": ctypes.POINTER(ctypes.c_char_p), "int64_t": ctypes.c_int64,
        "uint32_t": ctypes.c_uint32, "optimist_transport": _ffi.TRANSPORT, "void *": ctypes.c_void_p,
        "optimist_sync_listener": _ffi.SYNC_LISTENER, "int": ctypes.c_int,
    }
    for member, (name, ctype) in zip(members, _ffi.SyncOptions._fields_):
        t = re.sub(r"\s*\b\w+$", "", member)
        t = re.sub(r"\s*\*\s*", " *", t).strip()
        assert c_types[t] is ctype, (member, ctype)
    init = re.search(r"#define OPTIMIST_SYNC_OPTIONS_INIT\s*\\?\s*\{([^}]*)\}", HEADER.read_text())
    assert init
    values = [v.strip() for v in init.group(1).split(",")]
    assert values[3:8] == ["5000", "100", "10000", "500", "30000"]
    assert values[12] == "1"  # events
    import inspect
    import optimist
    defaults = inspect.signature(optimist.Store.sync_start).parameters
    assert [defaults[n].default for n in ("pull_interval_ms", "max_batch", "timeout_ms", "backoff_base_ms",
                                          "backoff_max_ms", "events")] == [5000, 100, 10000, 500, 30000, True]


def struct_members(name):
    """The members of ``typedef struct NAME {...} NAME;`` in the header, as (C type, name)."""
    body = re.sub(r"/\*.*?\*/", " ", HEADER.read_text(), flags=re.S)
    m = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name), body, flags=re.S)
    assert m, name
    members = [" ".join(x.split()) for x in m.group(1).split(";") if x.strip()]
    out = []
    for x in members:
        n = re.search(r"(\w+)$", x).group(1)
        t = re.sub(r"\s*\*\s*", " *", re.sub(r"\s*\b\w+$", "", x)).strip()
        out.append((t, n))
    return out


@pytest.mark.parametrize("name,struct", [("optimist_open_options", "OpenOptions"),
                                         ("optimist_mutate_options", "MutateOptions")])
def test_options_struct_layout(name, struct):
    """The open and mutate option structs: the header's members in order, with its C types."""
    c_types = {"unsigned int": ctypes.c_uint, "size_t": ctypes.c_size_t, "const char *": ctypes.c_char_p,
               "int": ctypes.c_int, "int64_t": ctypes.c_int64}
    cls = getattr(_ffi, struct)
    assert [(n, c_types[t]) for t, n in struct_members(name)] == list(cls._fields_)


def test_options_init_macros():
    """OPTIMIST_OPEN_OPTIONS_INIT and OPTIMIST_MUTATE_OPTIONS_INIT: the version first, then the
    defaults the Python package uses."""
    text = HEADER.read_text()
    init = {m.group(1): [v.strip() for v in m.group(2).split(",")] for m in
            re.finditer(r"#define (OPTIMIST_\w+_OPTIONS_INIT)\s*\\?\s*\{([^}]*)\}", text)}
    assert init["OPTIMIST_OPEN_OPTIONS_INIT"] == ["OPTIMIST_OPEN_OPTIONS_VERSION", "OPTIMIST_CACHE_BYTES_DEFAULT"] + [
        str(v) for v in _ffi.RETRY_POLICY_DEFAULT] + ["0", "0"]
    d = _ffi.OpenOptions.defaults()
    assert (d.version, d.cache_bytes, d.max_attempts, d.base_delay_ms, d.max_delay_ms, d.local_only, d.read_only) == (
        _ffi.OPEN_OPTIONS_VERSION, _ffi.CACHE_BYTES_DEFAULT) + _ffi.RETRY_POLICY_DEFAULT + (0, 0)
    assert re.search(r"#define OPTIMIST_CACHE_BYTES_DEFAULT \(\(size_t\)32 << 20\)", text)
    assert _ffi.CACHE_BYTES_DEFAULT == 32 << 20
    assert init["OPTIMIST_MUTATE_OPTIONS_INIT"] == ["OPTIMIST_MUTATE_OPTIONS_VERSION", "NULL", "OPTIMIST_POLICY_ROLLBACK"]


def test_mutate_ext_through_ctypes():
    """optimist_mutate_ext: the options' dedupe key and policy, NULL options, a bad version."""
    import optimist
    lib = _ffi.lib
    with optimist.Store() as store:
        b = ctypes.c_void_p()
        assert lib.optimist_batch_new(ctypes.byref(b)) == 0
        try:
            assert lib.optimist_batch_put(b, b"logs", b"k", b'{"n":1}') == 0
            out = ctypes.c_uint64()
            o = _ffi.MutateOptions(_ffi.MUTATE_OPTIONS_VERSION, b"tap-1", _ffi.POLICIES["keep"])
            assert lib.optimist_mutate_ext(store._h, b, ctypes.byref(o), ctypes.byref(out)) == 0
            first = out.value
            assert store.mutations()[0]["policy"] == "keep"
            assert store.mutations()[0]["dedupe_key"] == "tap-1"
            assert lib.optimist_mutate_ext(store._h, b, ctypes.byref(o), ctypes.byref(out)) == _ffi.DUPLICATE
            assert out.value == first
            assert lib.optimist_mutate_ext(store._h, b, None, ctypes.byref(out)) == 0
            assert store.mutations()[1]["policy"] == "rollback"
            bad = _ffi.MutateOptions(_ffi.MUTATE_OPTIONS_VERSION + 1, None, 0)
            assert lib.optimist_mutate_ext(store._h, b, ctypes.byref(bad), ctypes.byref(out)) == _ffi.MISUSE
            assert b"OPTIMIST_MUTATE_OPTIONS_INIT" in lib.optimist_last_error()
            bad = _ffi.MutateOptions(_ffi.MUTATE_OPTIONS_VERSION, None, 7)
            assert lib.optimist_mutate_ext(store._h, b, ctypes.byref(bad), ctypes.byref(out)) == _ffi.MISUSE
            assert store.pending_count() == 2
        finally:
            lib.optimist_batch_free(b)


def test_one_version():
    """OPTIMIST_VERSION is written once, in the header: OPTIMIST_VERSION_NUMBER agrees with it,
    and the loaded library and the Python package report it."""
    import optimist
    text = HEADER.read_text()
    version = re.search(r'^#define OPTIMIST_VERSION\s+"([0-9]+)\.([0-9]+)\.([0-9]+)"', text, flags=re.M)
    assert version
    major, minor, patch = (int(x) for x in version.groups())
    assert defines()["OPTIMIST_VERSION_NUMBER"] == major * 1000000 + minor * 1000 + patch
    text_version = "%d.%d.%d" % (major, minor, patch)
    assert optimist.library_version() == text_version
    assert optimist.__version__ == text_version
