/*
** optimist._speedups: the optional accelerator of the Python binding's hot path: a read
** (Store.get, Store.confirmed), building a put op (optimist.put), the one-put mutation
** (Store.mutate of one put) and a view's value (Store.view_get): a tap and what it shows.
**
** Why it exists: through ctypes, a foreign call with six arguments costs more than the library's
** own work (a cached read is about 1 us in the library and 2.4 us through ctypes on the bench
** machine). This module makes the same calls into the same loaded liboptimist, with the same
** arguments, from C. It is beside the ctypes binding, never instead of it: the package runs
** without it (it is built only where a C compiler and Python's headers are), every other call
** stays on ctypes, and OPTIMIST_PYTHON_SPEEDUPS=0 turns it off (optimist/_fast.py).
**
** It does not find or link the library itself: optimist/_fast.py hands it the addresses of the
** four functions from the ctypes-loaded library (bind), so there is one loader and one library
** in the process. The function types come from optimist.h, so a changed signature fails to
** compile here.
**
** Its functions take only the common case and answer FALLBACK (a sentinel bind receives) for
** anything else, before calling the library, so the ctypes path raises the usual errors with
** the usual messages: a key or collection that is not an exact str, holds a NUL or is not
** encodable. A nonzero result code from the library goes to the raise_for function bind
** receives, which raises what the ctypes path raises (the message is the calling thread's last
** error, still in place: nothing ran in between on this thread).
**
** The GIL is released for each library call, as ctypes does: a store call may wait for the
** store's lock, and the thread holding it may need the GIL (a subscription or a transport
** written in Python).
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "optimist.h"

typedef __typeof__(&optimist_get_into) read_fn;
typedef __typeof__(&optimist_put) put_fn;
typedef __typeof__(&optimist_view_get) view_fn;

/* Set once by bind(); the module refuses calls before it (BOUND). */
static read_fn get_into_fn;
static read_fn get_confirmed_into_fn;
static put_fn put_fn_ptr;
static view_fn view_get_fn;
static PyObject *loads_fn;    /* bytes -> record (orjson.loads or json.loads) */
static PyObject *raise_fn;    /* raise_for(rc): raises, returns nothing */
static PyObject *fallback;    /* the sentinel that sends the caller to the ctypes path */
static PyObject *dumps_fn;    /* orjson.dumps, or NULL: put_args then leaves encoding to Python */
static PyObject *dumps_refused; /* orjson.JSONEncodeError */

/* Records up to this size are read into the stack; a larger one into the heap. */
#define STACK_READ 4096

#define BOUND() (loads_fn != NULL)

static void *address(PyObject *o, const char *what) {
    void *p = PyLong_AsVoidPtr(o);
    if (p == NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "bind: %s is a NULL address", what);
    return p;
}

static PyObject *bind(PyObject *self, PyObject *args) {
    PyObject *get_addr, *confirmed_addr, *put_addr, *view_addr, *loads, *raise_for, *sentinel, *dumps,
        *refused;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO:bind", &get_addr, &confirmed_addr, &put_addr, &view_addr,
                          &loads, &raise_for, &sentinel, &dumps, &refused))
        return NULL;
    if (dumps != Py_None && !PyCallable_Check(dumps)) {
        PyErr_SetString(PyExc_TypeError, "bind: dumps must be callable or None");
        return NULL;
    }
    if (!PyCallable_Check(loads) || !PyCallable_Check(raise_for)) {
        PyErr_SetString(PyExc_TypeError, "bind: loads and raise_for must be callable");
        return NULL;
    }
    void *g = address(get_addr, "optimist_get_into");
    if (g == NULL) return NULL;
    void *c = address(confirmed_addr, "optimist_get_confirmed_into");
    if (c == NULL) return NULL;
    void *p = address(put_addr, "optimist_put");
    if (p == NULL) return NULL;
    void *v = address(view_addr, "optimist_view_get");
    if (v == NULL) return NULL;
    get_into_fn = (read_fn)g;
    get_confirmed_into_fn = (read_fn)c;
    put_fn_ptr = (put_fn)p;
    view_get_fn = (view_fn)v;
    Py_INCREF(raise_for);
    Py_XDECREF(raise_fn);
    raise_fn = raise_for;
    Py_INCREF(sentinel);
    Py_XDECREF(fallback);
    fallback = sentinel;
    Py_XDECREF(dumps_fn);
    Py_XDECREF(dumps_refused);
    dumps_fn = dumps_refused = NULL;
    if (dumps != Py_None) {
        Py_INCREF(dumps);
        Py_INCREF(refused);
        dumps_fn = dumps;
        dumps_refused = refused;
    }
    Py_INCREF(loads);
    Py_XDECREF(loads_fn);
    loads_fn = loads; /* last: BOUND() */
    Py_RETURN_NONE;
}

/* The UTF-8 of an exact str without NUL (cached in the str by CPython after the first call),
** or NULL with no error set: the caller answers FALLBACK. */
static const char *plain_utf8(PyObject *s) {
    if (!PyUnicode_CheckExact(s)) return NULL;
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL) {
        PyErr_Clear(); /* a lone surrogate: the ctypes path says so */
        return NULL;
    }
    if ((size_t)n != strlen(u)) return NULL; /* a NUL inside */
    return u;
}

/* The NUL-terminated contents of an exact bytes object without NUL, else NULL. */
static const char *plain_bytes(PyObject *b) {
    if (!PyBytes_CheckExact(b)) return NULL;
    const char *s = PyBytes_AS_STRING(b);
    if ((size_t)PyBytes_GET_SIZE(b) != strlen(s)) return NULL;
    return s;
}

static PyObject *raise_rc(int rc) {
    PyObject *r = PyObject_CallFunction(raise_fn, "i", rc);
    if (r != NULL) { /* raise_for returned: not expected, but never report success */
        Py_DECREF(r);
        PyErr_Format(PyExc_RuntimeError, "optimist: result code %d raised nothing", rc);
    }
    return NULL;
}

/* One read through fn: the decoded record, None for NOTFOUND, FALLBACK for uncommon input. */
static PyObject *read_record(read_fn fn, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) return PyErr_Format(PyExc_TypeError, "expected 3 arguments, got %zd", nargs);
    PyObject *handle = args[0], *coll = args[1], *key = args[2];
    if (!BOUND()) return PyErr_Format(PyExc_RuntimeError, "optimist._speedups: not bound");
    void *h = PyLong_AsVoidPtr(handle);
    if (h == NULL && PyErr_Occurred()) return NULL;
    const char *c = plain_utf8(coll);
    const char *k = c ? plain_utf8(key) : NULL;
    if (k == NULL) { Py_INCREF(fallback); return fallback; }

    char stack[STACK_READ];
    char *buf = stack, *heap = NULL;
    size_t cap = sizeof stack, len = 0;
    int rc;
    for (;;) {
        Py_BEGIN_ALLOW_THREADS
        rc = fn((optimist_store *)h, c, k, buf, cap, &len);
        Py_END_ALLOW_THREADS
        if (rc != OPTIMIST_OK || len < cap) break;
        /* Too large: read again into room for it (it may have grown in between: loop). */
        free(heap);
        cap = len + 1;
        heap = buf = malloc(cap);
        if (heap == NULL) return PyErr_NoMemory();
    }
    if (rc != OPTIMIST_OK) {
        free(heap);
        if (rc == OPTIMIST_NOTFOUND) Py_RETURN_NONE;
        return raise_rc(rc);
    }
    PyObject *bytes = PyBytes_FromStringAndSize(buf, (Py_ssize_t)len);
    free(heap);
    if (bytes == NULL) return NULL;
    PyObject *record = PyObject_CallOneArg(loads_fn, bytes);
    Py_DECREF(bytes);
    return record;
}

static PyObject *get(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return read_record(get_into_fn, args, nargs);
}

static PyObject *confirmed(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return read_record(get_confirmed_into_fn, args, nargs);
}

/* optimist_put(handle, coll, key, json): the new mutation's id, or FALLBACK. The three are the
** bytes an Op already holds (checked when it was built); anything else falls back. */
static PyObject *put(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) return PyErr_Format(PyExc_TypeError, "expected 4 arguments, got %zd", nargs);
    PyObject *handle = args[0], *coll = args[1], *key = args[2], *json = args[3];
    if (!BOUND()) return PyErr_Format(PyExc_RuntimeError, "optimist._speedups: not bound");
    void *h = PyLong_AsVoidPtr(handle);
    if (h == NULL && PyErr_Occurred()) return NULL;
    const char *c = plain_bytes(coll), *k = plain_bytes(key), *j = plain_bytes(json);
    if (c == NULL || k == NULL || j == NULL) { Py_INCREF(fallback); return fallback; }
    uint64_t id = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = put_fn_ptr((optimist_store *)h, c, k, j, &id);
    Py_END_ALLOW_THREADS
    if (rc != OPTIMIST_OK) return raise_rc(rc);
    return PyLong_FromUnsignedLongLong(id);
}

/* optimist_view_get(handle, name): the view's value, or FALLBACK for a name that is not an
** exact str without NUL. */
static PyObject *view_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "expected 2 arguments, got %zd", nargs);
    if (!BOUND()) return PyErr_Format(PyExc_RuntimeError, "optimist._speedups: not bound");
    void *h = PyLong_AsVoidPtr(args[0]);
    if (h == NULL && PyErr_Occurred()) return NULL;
    const char *name = plain_utf8(args[1]);
    if (name == NULL) { Py_INCREF(fallback); return fallback; }
    double value = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = view_get_fn((optimist_store *)h, name, &value);
    Py_END_ALLOW_THREADS
    if (rc != OPTIMIST_OK) return raise_rc(rc);
    return PyFloat_FromDouble(value);
}

/* Whether every value inside v (a dict, list or tuple) is of a type json and orjson write
** alike: exact str, int, bool, None, finite float, and dicts, lists and tuples of them, at most
** 32 levels below the record. The same rule as optimist/_json.py's _plain, which decides the
** same records on the Python path (a test holds the two to it). */
static int plain(PyObject *v, int depth) {
    PyObject *x;
    Py_ssize_t i = 0, n = 0;
    PyObject *key;
    int is_dict = PyDict_CheckExact(v);
    if (!is_dict) n = PySequence_Fast_GET_SIZE(v); /* an exact list or tuple */
    for (;;) {
        if (is_dict) {
            if (!PyDict_Next(v, &i, &key, &x)) return 1;
        } else {
            if (i >= n) return 1;
            x = PySequence_Fast_GET_ITEM(v, i);
            i++;
        }
        PyTypeObject *t = Py_TYPE(x);
        if (t == &PyUnicode_Type || t == &PyLong_Type || t == &PyBool_Type || x == Py_None) continue;
        if (t == &PyFloat_Type) {
            if (!isfinite(PyFloat_AS_DOUBLE(x))) return 0;
            continue;
        }
        if ((t == &PyDict_Type || t == &PyList_Type || t == &PyTuple_Type) && depth < 32 &&
            plain(x, depth + 1))
            continue;
        return 0;
    }
}

/* The bytes an Op of put(coll, key, value) passes to the library: (coll, key, json), each
** NUL-terminated UTF-8; or None, for optimist/_ops.py's put to build them itself (and raise
** what it raises): a name that is not an exact str without NUL, a value that is not an exact
** dict of plain values (see plain), a record orjson refuses, or no orjson in use. */
static PyObject *put_args(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) return PyErr_Format(PyExc_TypeError, "expected 3 arguments, got %zd", nargs);
    PyObject *coll = args[0], *key = args[1], *value = args[2];
    if (dumps_fn == NULL || !PyDict_CheckExact(value)) Py_RETURN_NONE;
    const char *c = plain_utf8(coll);
    const char *k = c ? plain_utf8(key) : NULL;
    if (k == NULL || !plain(value, 0)) Py_RETURN_NONE;
    PyObject *json = PyObject_CallOneArg(dumps_fn, value);
    if (json == NULL) {
        if (!PyErr_ExceptionMatches(dumps_refused)) return NULL;
        PyErr_Clear(); /* a name not a str, an int beyond 64 bits, a lone surrogate */
        Py_RETURN_NONE;
    }
    PyObject *cb = PyBytes_FromString(c);
    PyObject *kb = cb ? PyBytes_FromString(k) : NULL;
    if (kb == NULL) {
        Py_XDECREF(cb);
        Py_DECREF(json);
        return NULL;
    }
    PyObject *t = PyTuple_New(3);
    if (t == NULL) {
        Py_DECREF(cb);
        Py_DECREF(kb);
        Py_DECREF(json);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, cb);
    PyTuple_SET_ITEM(t, 1, kb);
    PyTuple_SET_ITEM(t, 2, json);
    return t;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(get_into, get_confirmed_into, put, view_get, loads, raise_for, fallback, dumps, refused): the "
     "library's functions (addresses), the record decoder, the error raiser, the fallback "
     "sentinel, and orjson's encoder and its error (or None twice)."},
    {"get", (PyCFunction)(void (*)(void))get, METH_FASTCALL, "get(handle, coll, key): the visible record, None, or fallback."},
    {"confirmed", (PyCFunction)(void (*)(void))confirmed, METH_FASTCALL,
     "confirmed(handle, coll, key): the confirmed record, None, or fallback."},
    {"put_args", (PyCFunction)(void (*)(void))put_args, METH_FASTCALL,
     "put_args(coll, key, value): the (coll, key, json) bytes of a put op, or None."},
    {"view_get", (PyCFunction)(void (*)(void))view_get, METH_FASTCALL,
     "view_get(handle, name): the view's value, or fallback."},
    {"put", (PyCFunction)(void (*)(void))put, METH_FASTCALL, "put(handle, coll, key, json): the mutation id, or fallback."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "optimist._speedups",
    "The optional C accelerator of Store.get, Store.confirmed and the one-put Store.mutate.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
