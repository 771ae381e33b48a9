"""What the candidate's process serves, once :mod:`hf_eval.isolation.process` has confined it.

It loads one solution and runs what the audit asks for. It never sees a reference output,
the reference cache or a dataset file: inputs arrive as sealed memfds it can only read,
and outputs leave through the output slots the audit lent it (the one memory it may
write). A reply says only what happened (:mod:`hf_eval.isolation.protocol`): that a
request was served, or the candidate's error in its own words, and where outputs did
not fit their slot, their dtype and shape. It never carries a status: every verdict is
the audit's.

Every call of the candidate goes through :meth:`Worker.trial`, whether the audit will
time it, check it, or both (it checks every one), so the call stack, the arguments' kind
and the environment are the same for all of them. Whatever this process reports about
time is only a cross-check: the audit's own clock, outside this process, bounds it. Nothing
this process says is trusted: its checks (aliasing, plain tensors) only turn a bad output
into an error text sooner.
"""

from __future__ import annotations

import _signal
import _socket
import _thread
import bisect
import ctypes
import functools
import gc
import os
import signal
import socket
import statistics
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable

import numpy as np
import torch

from hf_eval.data.schema import Solution
from hf_eval.data.sources import Entry, load_entry
from hf_eval.isolation.channel import Channel, ChannelClosed, receive_request, send_reply
from hf_eval.isolation.protocol import MAX_OUTPUTS, l2_flush_bytes
from hf_eval.isolation.reveal import LOOKED_UP, unmask, unmask_words, words_of

# Bound before any candidate code runs; checked unchanged after every request (a patched
# function can only hurt the candidate here: the audit's clock and checks live elsewhere).
_synchronize = torch.cuda.synchronize
_perf_counter = time.perf_counter
_untyped_storage = torch.Tensor.untyped_storage
#: Where a tensor's memory lies, read through the C types' own accessors: a candidate
#: that shadows them on the Python classes (``torch.UntypedStorage.data_ptr``,
#: ``torch.Tensor.device``) does not reach the worker's overlap checks.
_storage_data_ptr, _storage_nbytes = torch._C.StorageBase.data_ptr, torch._C.StorageBase.nbytes
_device_of = torch._C.TensorBase.__dict__["device"].__get__
#: What the output path reads of a tensor, through the same C accessors: an attribute of
#: ``torch.Tensor`` set for one request (a property that runs code and removes itself)
#: is never looked up there.
_TENSOR_BASE = vars(torch._C.TensorBase)
#: ``torch.Tensor``'s own namespace (a live view): a ``__del__`` set there is refused.
_TENSOR_NAMES = vars(torch.Tensor)
#: ``torch.Tensor``'s own dispatch handlers as the worker found them.
_TENSOR_DISPATCH = tuple((name, _TENSOR_NAMES.get(name))
                         for name in ("__torch_dispatch__", "__torch_function__"))
_shape_of, _dtype_of, _layout_of, _is_meta, _requires_grad = (
    _TENSOR_BASE[name].__get__
    for name in ("shape", "dtype", "layout", "is_meta", "requires_grad"))
_copy, _detach = _TENSOR_BASE["copy_"], _TENSOR_BASE["detach"]
_tensor_data_ptr, _tensor_nbytes = _TENSOR_BASE["data_ptr"], _TENSOR_BASE["nbytes"].__get__
#: Where a numpy array's memory lies, through ndarray's own descriptors.
#: The dtype of the arena's words (uint64, as the reveal views them), and its reader.
_WORD, _array_dtype = np.dtype(np.uint64), vars(np.ndarray)["dtype"].__get__
_array_interface, _array_nbytes = (vars(np.ndarray)[name].__get__
                                   for name in ("__array_interface__", "nbytes"))
_STRIDED, _UINT8, _BOOL = torch.strided, torch.uint8, torch.bool
_OUT_OF_MEMORY = torch.OutOfMemoryError
_sock_fileno = vars(_socket.socket)["fileno"]
#: The interpreter's thread switch interval as the worker found it: put back before each
#: message and after a trial's calls (a candidate's thread racing the harness's own steps
#: would win more often with a shorter one).
_SWITCH_INTERVAL, _set_switch_interval = sys.getswitchinterval(), sys.setswitchinterval
_receive_request, _send_reply = receive_request, send_reply
#: The C functions themselves: ``signal.getsignal`` and ``signal.signal`` are Python code
#: that looks up names of the ``signal`` module (``_int_to_enum``) as it runs.
_getsignal, _setsignal = _signal.getsignal, _signal.signal
#: Every signal's Python handler as the serve loop found it, before any candidate code
#: ((number, handler) pairs; set once, when it starts).
_SIGNAL_BASELINE: tuple[tuple[int, object], ...] = ()


#: The modules whose names the worker's own handling of a message calls as it runs (and
#: ``builtins``, where every harness function finds ``len``, ``type``, ``zip``).
_MESSAGE_PATH = ("builtins", "hf_eval.isolation.server", "hf_eval.isolation.channel",
                 "hf_eval.isolation.reveal", "hf_eval.data.memory", "json", "json.encoder",
                 "warnings", "threading", "random", "secrets", "numpy.random.bit_generator",
                 "numpy.random._common")
#: Modules of which only some names are on the message path, and which may gain others
#: (numpy adds a submodule's name when it is first imported): those names are put back,
#: nothing added is taken out. numpy's are the ones its Philox looks up as the reveal
#: draws (``LOOKED_UP``).
_MESSAGE_PATH_NAMES = (("numpy", tuple(name for module, name in LOOKED_UP
                                       if module is np)),)

#: What :func:`_path_names` keeps of a module: its name, its namespace, the (name, value)
#: pairs it held and the set of those names (immutable, so that a candidate who reaches
#: the record through a frame cannot make it agree with a name it rebound).
PathNames = tuple[tuple[str, dict, tuple[tuple[str, object], ...], frozenset[str] | None,
                        type | None], ...]


#: ``Py_TPFLAGS_HEAPTYPE``: a class made by a class statement, whose names can be set.
_HEAP_TYPE = 1 << 9


def _path_names() -> PathNames:
    """Each module of :data:`_MESSAGE_PATH` and each class its modules define (the
    worker's own, the channel's unpickler and tensor references, the shared maps, the
    encoder, ``threading``'s and ``random``'s classes), and the names of
    :data:`_MESSAGE_PATH_NAMES`: its namespace and what it holds now (for the latter, no
    set of names: what is added there stays)."""
    spaces = [(name, vars(sys.modules[name]), None) for name in _MESSAGE_PATH]
    spaces += [(kind.__name__ if name.startswith("hf_eval.") else f"{name}.{kind.__name__}",
                vars(kind), kind)
               for name in _MESSAGE_PATH if name != "builtins"
               for kind in list(vars(sys.modules[name]).values())
               if isinstance(kind, type) and kind.__module__ == name
               and kind.__flags__ & _HEAP_TYPE  # (a C type's table: _TYPE_TABLES)
               # and made by ``type`` itself: putting a name back looks it up on the
               # class's metaclass first, and runs a descriptor found there (``type``'s
               # table is restored before any put-back; another metaclass's, such as
               # ``abc.ABCMeta``'s, is not)
               and type(kind) is type]
    records = [(name, space, tuple(space.items()), frozenset(space), kind)
               for name, space, kind in spaces]
    records += [(name, vars(sys.modules[name]),
                 tuple((key, vars(sys.modules[name])[key]) for key in keys), None, None)
                for name, keys in _MESSAGE_PATH_NAMES]
    return tuple(records)


def _odd_keys(mapping: object, _type=type, _str=str, _list=list) -> bool:
    """Whether a namespace or dict holds a key that is not exactly a str, read by walking
    its keys: no key is hashed or compared, so no code of a key's class runs. (A key of
    the candidate's class whose hash matches a name's runs its ``__eq__`` at every lookup
    of that name: in the harness's own steps, where the harness reads that dict.)"""
    for key in _list(mapping):
        if _type(key) is not _str:
            return True
    return False


def _put_back(saved: PathNames, replaced: list[object], _len=len, _type=type, _str=str,
              _list=list, _setattr=type.__setattr__, _delattr=type.__delattr__,
              _items=dict.items, _clear=dict.clear, _update=dict.update,
              _odd=_odd_keys, _enumerate=enumerate) -> list[str]:
    """Put every name of the message path back as it was (``saved``, taken before any
    candidate code), take out any added, and return those that had changed
    (``module.name``). Run before each message is received and before each reply is
    sent: a name the candidate rebound (the reply's encoder, the collector's switch)
    would otherwise run its code there, where the checks' own report of it leaves.
    What was replaced is held in ``replaced`` (freed here, it could run a finalizer).
    It looks up no name as it runs (what it calls is bound in its defaults), and
    ``builtins`` comes first, so no name it puts back runs before it is back. A record
    with no set of names (:data:`_MESSAGE_PATH_NAMES`) has only its names put back:
    what was added beside them stays.

    A key that is not a str is looked for first, in every namespace, without hashing
    any: a module's namespace that holds one is rebuilt from what was saved (emptied and
    refilled, the keys and values held), so no lookup meets it; a class's, which cannot
    be rebuilt, is left unread. Either is reported."""
    changed = []
    odd = False  # a local: no code of the candidate's can reset it
    unread = []  # the classes' namespaces left unread (by their index in ``saved``)
    for index, (module, namespace, items, _, kind) in _enumerate(saved):
        if not _odd(namespace):
            continue
        odd = True
        changed.append(f"{module}.<a name that is not a str>")
        if kind is not None:
            unread.append(index)
            continue
        for pair in _list(_items(namespace)):  # held: none is freed (and finalized) here
            replaced.append(pair)
        _clear(namespace)
        _update(namespace, items)
    for index, (module, namespace, items, names, kind) in _enumerate(saved):
        if index in unread:  # (a class's namespace is read-only: changed through the type)
            continue
        for name, value in items:
            if namespace.get(name) is not value:
                changed.append(f"{module}.{name}")
                replaced.append(namespace.get(name))
                if kind is not None:
                    _setattr(kind, name, value)
                else:
                    namespace[name] = value
        if names is None or _len(namespace) == _len(items):
            continue
        for name, value in _list(namespace.items()):
            if name in names or name == "__warningregistry__":
                continue  # kept, or the warnings machinery's own record
            changed.append(f"{module}.{name}")
            replaced.append(value)
            if kind is not None:
                _delattr(kind, name)
            else:
                namespace.pop(name)
    if odd and not changed:  # emptied meanwhile: still reported
        changed.append("a namespace's key that is not a str")
    return changed


#: The operators the harness itself runs inside a trial, before the calls (the GPU reveal,
#: the graph outputs' poisoning, the L2 flush) and after them (the copy into the slots):
#: a kernel the candidate registered for one (``torch.library``) would run its code
#: there, in place of the harness's (a flush that reads nothing).
_OPS_BEFORE_CALLS = ("aten::random_.from", "aten::bitwise_xor_.Tensor", "aten::fill_.Scalar",
                     "aten::empty.memory_format", "aten::sum")
_OPS_AFTER_CALLS = ("aten::copy_", "aten::detach")
_dispatch_dump = torch._C._dispatch_dump
#: Each of those operators' dispatch table as the serve loop found it (set when it starts).
_DISPATCH_BASELINE: tuple[tuple[str, str, torch._ops.OpOverload, type,
                                tuple[object, tuple[tuple[object, object], ...]]], ...] = ()


_PYTHON_DISPATCHER = torch._C.DispatchKey.PythonDispatcher
_tls_included = torch._C._dispatch_tls_is_dispatch_key_included


def _overload(op: str) -> torch._ops.OpOverload:
    """``aten::name.overload`` as torch's operator object (``default`` where none)."""
    name, _, overload = op.removeprefix("aten::").partition(".")
    return getattr(getattr(torch.ops.aten, name), overload or "default")


_dict_get, _dict_items = dict.get, dict.items
#: What an operator's table reads as when its namespace holds a key that is not a str.
_ODD_TABLE = object()
#: An operator object's namespace, read through the slot its class was made with (the
#: ``__dict__`` descriptor of the first class of its line that has one), bound now: an
#: operator whose class the candidate swapped for one with a ``__dict__`` property of
#: its own is read without running it (and is reported, its class not being the one
#: the serve loop found).
_operator_namespace = next(vars(kind)["__dict__"] for kind in torch._ops.OpOverload.__mro__
                           if "__dict__" in vars(kind)).__get__


def _python_kernels(overload: torch._ops.OpOverload
                    ) -> tuple[object, tuple[tuple[object, object], ...]]:
    """The table of Python kernels torch's Python dispatcher holds for an operator, and
    its (key, kernel) pairs; read through the bound slot and ``dict``'s own methods (the
    operator's class and the table could be the candidate's: a table of its class would
    run its ``items`` in the check). A table that is not a plain dict reads as None."""
    namespace = _operator_namespace(overload)
    if type(namespace) is not dict or _odd_keys(namespace):
        return _ODD_TABLE, ()  # never the table the serve loop found: reported
    table = _dict_get(namespace, "py_kernels")
    if type(table) is not dict:
        return None, ()
    return table, tuple(_dict_items(table))


def _kernels_replaced(ops: tuple[str, ...]) -> str | None:
    """What of the first of ``ops`` whose kernels are not as the serve loop found them: its
    dispatch table, or its Python kernels (which the table does not show, and which run
    while the Python dispatcher is on), or any of them while the candidate holds the
    Python dispatcher on."""
    if _tls_included(_PYTHON_DISPATCHER):
        return "the Python dispatcher's switch (left on)"
    for op, table, overload, kind, (kernels, python) in _DISPATCH_BASELINE:
        if op in ops:
            if type(overload) is not kind:
                return f"the class of {op}'s operator"
            found, now = _python_kernels(overload)
            if _dispatch_dump(op) != table or found is not kernels or len(now) != len(
                    python) or any(a is not c or b is not d
                                   for (a, b), (c, d) in zip(now, python)):
                return f"a kernel of {op}"
    return None


_type_setattr, _type_delattr = type.__setattr__, type.__delattr__


def _handlers_changed(baseline: tuple[tuple[int, object], ...], _get=_getsignal) -> bool:
    """Whether a signal's Python handler is not the one of ``baseline`` (the serve loop's
    :data:`_SIGNAL_BASELINE`), read with no handler run: ``signal.getsignal`` runs none,
    where ``signal.signal``, which puts one back, first runs every handler whose signal
    is pending (a handler of the candidate's, left pending by the calls, would run there,
    in the harness's steps)."""
    for number, handler in baseline:
        if _get(number) is not handler:
            return True
    return False


def _restore_signals(replaced: list[object], _get=_getsignal, _set=_setsignal) -> None:
    """Put back every signal's handler as it was before any candidate code, in the
    interpreter's table and in the kernel. A handler of the candidate's runs on the main
    thread when its signal comes (a timer it set, the channel set to signal its arrivals,
    a fault in memory it handed back as an output), so that one landing inside the
    harness's own handling of a message could rewrite the message, or compute the outputs
    inside the harness's copy of them. Each signal's disposition is set again whether or
    not the table shows a change: a handler set through libc (``sigaction`` by ``ctypes``)
    is in the kernel only, where the table does not look (about 20 us for every signal).
    Each Python handler replaced is kept in ``replaced`` (freed here, its finalizer would
    run here, and could set another), and the pass is repeated until none is left."""
    while True:
        found = False
        for number, handler in _SIGNAL_BASELINE:
            current = _get(number)
            if current is not handler:
                replaced.append(current)
                found = True
            _set(number, handler)
        if not found:
            return
_fstat = os.fstat


def _identity(descriptor: int) -> tuple[int, int]:
    """What file a descriptor is (device and inode)."""
    info = _fstat(descriptor)
    return info.st_dev, info.st_ino
#: The key under which a trial hands its calls' results to the serve loop, which holds
#: them until the reply has left (never sent).
_KEPT = "_kept"
_RENAMED = "harness integrity: candidate code replaced "
#: What a trial calls on CUDA, as the C functions and the C types' own methods:
#: ``torch.cuda.synchronize``, ``current_stream``, ``_sleep`` and the ``Event`` class are
#: Python code that looks up ``torch.cuda`` and ``torch._C`` names as it runs (and an
#: event's ``record`` or ``elapsed_time`` set on its class would choose the time). None
#: in a build without CUDA.
_cuda_synchronize = getattr(torch._C, "_cuda_synchronize", None)
_cuda_sleep = getattr(torch._C, "_cuda_sleep", None)
_cuda_stream_now = getattr(torch._C, "_cuda_getCurrentStream", None)
_cuda_device_now = getattr(torch._C, "_cuda_getDevice", None)
_EventBase = getattr(torch._C, "_CudaEventBase", None)
_StreamBase = getattr(torch._C, "_CudaStreamBase", None)
_event_record = getattr(_EventBase, "record", None)
_event_elapsed = getattr(_EventBase, "elapsed_time", None)
_stream_pointer = getattr(vars(_StreamBase).get("cuda_stream") if _StreamBase is not None
                          else None, "__get__", None)
#: torch's frame-evaluation callback (PEP 523, ``torch._C._dynamo.eval_frame``), its C
#: setter: a callback left set on the main thread runs at the start of every Python
#: function that thread evaluates, the harness's own steps too, with no audit event and no
#: profile function. The worker sets it to None right after the calls and after every
#: handler, before any Python function runs, and reports one it found. None in a build
#: without it.
_set_eval_frame = getattr(getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None),
                          "set_eval_frame", None)
#: How a frame-evaluation callback found left set is reported.
_EVAL_FRAME = "torch's frame-evaluation callback (a callback left set)"
#: torch's switch that makes a warning it gives once per process (a read-only buffer
#: mapped, which the worker's receive does at every request) go through the warnings
#: filters every time, where a candidate's filter entry runs its own code.
_warn_always, _set_warn_always = torch._C._get_warnAlways, torch._C._set_warnAlways
_WARN_ALWAYS = "torch's warn-always switch (left on)"


def _type_tables() -> tuple:
    """The method tables of the built-in and C types whose methods the worker's steps call
    by name (``dict.get``, ``list.append``, ``str.encode``, ``torch.device.type``), the
    channel's (the header's ``Struct``, ``poll``, the unpickler and the file it reads) and
    the reveal's (numpy's Philox and arrays, the helper threads' locks) among them, or
    that C code looks up by name for them: each type, its real namespace (the dict behind
    its read-only ``vars``, which Python code can reach: ``gc.get_referents``, or a
    comparison that hands it to an object of the candidate's), what it held, and its
    names. Taken at import, before any candidate code."""
    import _pickle
    import _struct
    import array
    import io
    import mmap
    import re
    import select
    kinds = (object, type, dict, list, tuple, str, bytes, bytearray, int, float, bool,
             complex, set, frozenset, memoryview, slice, range, property, staticmethod,
             classmethod, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
             types.MethodDescriptorType, types.WrapperDescriptorType,
             types.MethodWrapperType, types.GetSetDescriptorType,
             types.MemberDescriptorType, types.MappingProxyType, types.CodeType,
             types.FrameType, types.TracebackType, types.ModuleType, types.CellType,
             types.GeneratorType, BaseException, Exception, StopIteration, KeyError,
             mmap.mmap, array.array, _socket.socket, torch.device, torch.dtype, torch.Size,
             torch._C.TensorBase, torch._C.Generator, _struct.Struct, type(select.poll()),
             _pickle.Unpickler, io.BytesIO, _thread.LockType, _thread.RLock, re.Pattern,
             re.Match,
             np.ndarray, np.random.BitGenerator, np.random.Philox, np.random.SeedSequence,
             *(kind for kind in (_EventBase, _StreamBase, getattr(torch._C, "_CUDAGraph", None))
               if kind is not None))
    tables = []
    for kind in kinds:
        real = gc.get_referents(vars(kind))[0]
        tables.append((kind, real, tuple(real.items()), frozenset(real)))
    return tuple(tables)


#: The built-in types' method tables as the worker found them (:func:`_type_tables`).
_TYPE_TABLES = _type_tables()
#: Renew a type's version, as the C API's ``PyType_Modified`` does, with no ``ctypes``
#: object (whose ``errcheck``, ``restype`` and argument converters the candidate could
#: set, and whose class's call it could replace): the setter of ``__abstractmethods__``,
#: a C function that takes any type, built-in ones too, adds that name to the type's
#: table and renews its version, and its deleter, which takes the name out and renews it
#: again. Both bound here, before any candidate code.
_abstract_set = vars(type)["__abstractmethods__"].__set__
_abstract_delete = vars(type)["__abstractmethods__"].__delete__


def _type_modified(kind: type, _set=_abstract_set, _delete=_abstract_delete) -> None:
    """Renew ``kind``'s version: the interpreter's call sites that cached its entries, and
    the lookup cache, look again."""
    _set(kind, ())
    _delete(kind)


_TYPES_CHANGED = "a built-in type's methods"
#: How a signal handler the calls set is reported.
_HANDLERS_CHANGED = "a signal's handler"


#: What the worker took out of the candidate's reach outside a message's own ``kept`` (what
#: a table rebuilt by :func:`_restore_type_tables` held, a mode found on its stack as a
#: trial starts): kept for the worker's life, so that none of it is freed (and finalized)
#: in the harness's steps.
_LEFTOVERS: list[object] = []


def _restore_type_tables(_tables=_TYPE_TABLES, _modified=_type_modified,
                         _clear=sys._clear_type_cache, _odd=_odd_keys, _items=dict.items,
                         _empty=dict.clear, _update=dict.update, _list=list,
                         _held=_LEFTOVERS) -> bool:
    """Put every entry of the built-in types' method tables back as it was, and say
    whether one had changed. It calls no method by name, only the dicts' and tuples'
    own slots (subscript, ``in``, iteration) and the dict functions bound in its
    defaults, which a table's entries do not reach; a type whose table changed gets a
    new version (the interpreter's call sites that cached its old entries look again),
    and the lookup cache is emptied.

    Every table is first walked for a key that is not exactly a str, before any is
    looked up (a key of the candidate's class with a name's hash would run its
    ``__hash__`` and ``__eq__`` at each lookup, this one's too): a table holding one is
    emptied and refilled from what was taken at import, what it held kept."""
    changed = False
    for kind, real, items, _ in _tables:
        if _odd(real):
            _held.append(_list(_items(real)))
            _empty(real)
            _update(real, items)
            _modified(kind)
            changed = True
    for kind, real, items, names in _tables:
        touched = False
        for key, value in items:
            if key not in real or real[key] is not value:
                real[key] = value
                touched = True
        for key in [key for key in real if key not in names]:
            del real[key]
            touched = True
        if touched:
            _modified(kind)
            changed = True
    _clear()
    return changed


def _current_stream() -> tuple[object, tuple[int, int, int]]:
    """(CUDA) The current stream as an object of torch's C stream type, and what it is
    (its id, device index and device type: plain ints, compared with no code of
    anyone's)."""
    data = _cuda_stream_now(_cuda_device_now())
    return _StreamBase(stream_id=data[0], device_index=data[1], device_type=data[2]), data


_fill = torch.Tensor.fill_
_sum = torch.Tensor.sum
_empty = torch.empty
#: The collector's controls and its callback list, bound before any candidate code: a
#: candidate that rebinds ``gc.disable`` or ``gc.callbacks`` changes names, not these.
_gc_collect, _gc_disable, _gc_isenabled = gc.collect, gc.disable, gc.isenabled
_gc_callbacks = gc.callbacks
_function_modes = torch._C._len_torch_function_stack
_dispatch_modes = torch._C._len_torch_dispatch_stack
#: How a torch function or dispatch mode left active is reported.
_MODES_LEFT = "the torch function or dispatch mode stack (a mode left active)"


def _drop_modes(held: list[object], _function=_function_modes, _dispatch=_dispatch_modes,
                _pop_function=torch._C._pop_torch_function_stack,
                _pop_dispatch=torch._C._pop_torch_dispatch_stack) -> bool:
    """Take every torch function and dispatch mode off its stack (a mode runs its code in
    each torch operation of the harness's: the reveal's, the checks'), keep them in
    ``held`` (freed here, a finalizer would run), and say whether there was one. C
    functions bound at import: it looks up no name."""
    found = False
    while _function():
        held.append(_pop_function())
        found = True
    while _dispatch():
        held.append(_pop_dispatch(None))
        found = True
    return found
_local_include_set, _local_exclude_set = (torch._C._dispatch_tls_local_include_set,
                                          torch._C._dispatch_tls_local_exclude_set)
_keyset_bits = torch._C.DispatchKeySet.raw_repr


def _dispatch_keys(_bits=_keyset_bits, _included=_local_include_set,
                   _excluded=_local_exclude_set) -> tuple[int, int]:
    """The dispatch keys this thread includes and excludes of its own (torch's
    thread-local state, as plain ints, read by C functions bound at import): a key left
    included sends torch's own operations in the harness's steps to a fallback of the
    candidate's (``torch.library``'s ``fallback`` on ``PrivateUse1``: a cold trial's
    flush, the outputs' poisoning), which no table of the operators' kernels shows. It
    looks up no name (the trial calls it before the names are put back)."""
    return _bits(_included()), _bits(_excluded())


_tensor_keys = torch._C._dispatch_keys
#: Dispatch keys no plain dense tensor carries: a tensor subclass's
#: (``__torch_dispatch__``), functorch's and functionalisation's wrappers', the nested,
#: sparse, quantized and zero tensors', and a lazy negation's or conjugation's (which the
#: harness's copy would carry out after the clock). A subclass's key stays on an object
#: whose class was then set to ``torch.Tensor``, and sends the harness's own operations on
#: that output (``detach``, the shape it reads, ``copy_``, the poisoning) to the
#: candidate's code; the others would meet the harness's reads with torch's internal
#: errors.
_NOT_PLAIN = tuple(getattr(torch._C.DispatchKey, name) for name in (
    "Python", "PythonTLSSnapshot", "PythonDispatcher", "Functionalize", "FuncTorchBatched",
    "FuncTorchGradWrapper", "FuncTorchVmapMode", "FuncTorchBatchedDecomposition",
    "FuncTorchDynamicLayerFrontMode", "FuncTorchDynamicLayerBackMode", "NestedTensor",
    "Sparse", "SparseCsr", "Quantized", "ZeroTensor", "Negative", "Conjugate"))
_NOT_PLAIN_KEYS = _keyset_bits(functools.reduce(
    lambda keys, key: keys.add(key), _NOT_PLAIN[1:], torch._C.DispatchKeySet(_NOT_PLAIN[0])))


def _not_plain(tensor: torch.Tensor, _bits=_keyset_bits, _keys=_tensor_keys,
               _mask=_NOT_PLAIN_KEYS) -> bool:
    """Whether a tensor carries one of :data:`_NOT_PLAIN` (read from its own key set by C
    functions bound at import, before any torch operation on it)."""
    return bool(_bits(_keys(tensor)) & _mask)


#: The main thread's dispatch keys as the worker found them at import, before any candidate
#: code.
_DISPATCH_KEYS: tuple[int, int] = _dispatch_keys()
#: How a change of them is reported.
_KEYS_CHANGED = "the thread's dispatch keys (a key left included or excluded)"
#: Cycles of the sleep kernel ahead of an eager trial's start event (about 25 us at
#: 2 GHz): the host launches the calls meanwhile, so the events time the device, not the
#: launch. (A graph trial waits on the launch gate instead, :class:`LaunchGate`.)
LEAD_CYCLES = 50_000
#: Cycles of the sleep kernel ahead of a graph trial's gate: only the CUPTI window's start.
GATE_LEAD_CYCLES = 1_000
#: Seconds after which a gate the worker has not opened opens itself (a replay whose
#: launch could not finish behind the closed gate): the trial is then timed as with no
#: lead at all, and the host clock shows the wait.
GATE_MAX_S = 0.05
#: The gate's values stay below this (the device compares 32-bit words).
GATE_VALUE_END = 2**31 - 1
#: What the gate's watchdog is made of, bound before any candidate code.
_Thread, _Lock = threading.Thread, _thread.allocate_lock
_LOCK, _CFuncPtr = type(_thread.allocate_lock()), ctypes._CFuncPtr
_monotonic, _host_sleep = time.monotonic, time.sleep
#: The lead sleep's kernel and the end marker's (a fill of the worker's one-byte tensor,
#: after the calls' synchronise): a trial's CUPTI span is the activity between them.
LEAD = "spin_kernel"
MARKER = "FillFunctor<unsigned char>"
#: Marks an input of a set as "the tensor another registered set holds at this index"
#: (``(SAME_AS, set id, index)``): a workload's tensors are uploaded once, not per set.
SAME_AS = "@same-as"
GUARDED = [
    (time, "perf_counter"), (statistics, "median"), (torch, "equal"),
    (torch.cuda, "synchronize"), (torch.cuda, "graph"), (torch.cuda.Event, "record"),
    (torch.cuda.Event, "elapsed_time"), (torch.cuda.CUDAGraph, "replay"),
    (torch.Tensor, "data_ptr"), (torch.Tensor, "untyped_storage"), (torch.Tensor, "cpu"),
    (torch.Tensor, "clone"), (torch.Tensor, "detach"), (torch.Tensor, "copy_"),
    (torch.Tensor, "to"), (torch.Tensor, "fill_"), (torch.Tensor, "sum"),
    (torch.cuda, "_sleep"), (torch, "empty"),
    (gc, "collect"), (gc, "disable"), (gc, "enable"), (gc, "isenabled"), (gc, "callbacks"),
    (torch.UntypedStorage, "data_ptr"), (torch.UntypedStorage, "nbytes"),
    (torch.Tensor, "device"), (torch.Tensor, "shape"), (torch.Tensor, "dtype"),
    (torch.Tensor, "nbytes"), (torch.Tensor, "reshape"), (torch.Tensor, "view"),
    (torch.Tensor, "numpy"), *LOOKED_UP,
]


#: Standard-library modules a message passes through (the channel's JSON encoder,
#: ``socket`` and ``_socket``, ``array``, whose ``array`` carries the descriptors, and
#: ``warnings``, whose names the worker's path once used): snapshotted
#: like
#: the harness's own, and so is ``builtins`` (every harness function looks up ``zip``,
#: ``len``, ``type`` there).
REPLY_PATH = ("json", "json.encoder", "socket", "_socket", "array", "warnings", "threading",
              "random", "secrets")


def _harness_namespaces() -> list[tuple[str, dict]]:
    """Every namespace of the harness in this process: each ``hf_eval`` module's globals
    and each class it defines, the modules of :data:`REPLY_PATH` and the names of
    ``builtins`` (a candidate that rebinds any of them is reported)."""
    spaces = []
    for name, module in sorted(sys.modules.items()):
        if not (name == "hf_eval" or name.startswith("hf_eval.") or name in REPLY_PATH
                or name == "builtins") or module is None:
            continue
        spaces.append((name, vars(module)))
        if name == "builtins":  # its names (its types: the method tables, _TYPE_TABLES)
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, type) and value.__module__ == name:
                spaces.append((f"{name}.{attr}", value.__dict__))
    return spaces


#: What a namespace held: (where, the namespace, its (name, object, the object's code)
#: triples), immutable.
Snapshot = tuple[tuple[str, dict, tuple[tuple[str, object, object], ...]], ...]


def _code(value: object, _function=types.FunctionType,
          _read=types.FunctionType.__code__.__get__) -> object:
    """A function's code object (swapped in place, it changes what the function does
    without changing the function), else None. Read from exact functions only, through
    the descriptor bound at import: an attribute lookup on any other object could run a
    ``__getattr__`` of the candidate's inside the check."""
    return _read(value) if type(value) is _function else None


def _where_names_lie(owner: object) -> tuple[dict, ...]:
    """The namespaces a name of ``owner`` is found in: a module's own, a class's and its
    bases' (taken now: reading them through the owner later could run code of the
    candidate's, a module's class being changeable)."""
    return tuple(vars(c) for c in owner.__mro__) if isinstance(owner, type) else (vars(owner),)


#: Each guarded name: (where its owner's names lie, name, the original object, its code,
#: its label), all made now (naming an owner later could run code of the candidate's).
_ORIGINALS = tuple((_where_names_lie(owner), name, original, _code(original),
                    f"{getattr(owner, '__name__', owner)}.{name}")
                   for owner, name in GUARDED
                   for original in [owner.__dict__.get(name, getattr(owner, name))])
_GUARDED_SPACES = tuple({id(space): space for spaces, *_ in _ORIGINALS
                         for space in spaces}.values())


def _snapshot() -> Snapshot:
    """Every harness namespace as it is now (the objects are held, so none is reused)."""
    return tuple((where, space, tuple((k, v, _code(v)) for k, v in list(space.items())))
                 for where, space in _harness_namespaces())


def _integrity_problems(baseline: Snapshot) -> list[str]:
    """Names of harness functions and globals that candidate code replaced, removed or
    gave other code since ``baseline`` (taken before any candidate code ran)."""
    changed = []
    # The interpreter's table of modules, read by name below (and at every import): a
    # key that is not exactly a str would run its ``__eq__`` there.
    if _odd_keys(_MODULES):
        return ["sys.modules (a name that is not a str)"]
    # A name that is not exactly a str where a guarded name lies: a lookup there would
    # call its ``__eq__`` (each namespace scanned once).
    if any(type(key) is not str for space in _GUARDED_SPACES for key in list(space)):
        return [*changed, "a guarded namespace (a name that is not a str)"]
    for spaces, name, original, code, label in _ORIGINALS:
        now = next((space[name] for space in spaces if name in space), None)
        if now is not original or _code(now) is not code:
            changed.append(label)
    missing = object()
    for where, space, items in baseline:
        # A name that is not exactly a str: looking a name up where it lies would call
        # its ``__eq__`` (the candidate's) inside the check, so the namespace is reported
        # and not read further.
        names = list(space)
        if any(type(key) is not str for key in names):
            changed.append(f"{where}.<a name that is not a str>")
            continue
        for key, value, code in items:
            now = space.get(key, missing)
            if now is not value or _code(now) is not code:
                changed.append(f"{where}.{key}")
        # A name added: a global named like a builtin shadows it in every harness
        # function of that module (a ``zip`` of the candidate's inside ``collect``).
        known = {key for key, _, _ in items}
        changed += [f"{where}.{key}" for key in names
                    if key not in known and not _added_by_python(where, key, space[key])]
    return changed


def _package_modules() -> frozenset[str]:
    """The dotted name of every module file of the ``hf_eval`` package (read now: a
    worker can write nothing there)."""
    home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    names = set()
    for folder, _, files in os.walk(home):
        parts = ["hf_eval", *os.path.relpath(folder, home).split(os.sep)]
        parts = [p for p in parts if p != "."]
        names.update(".".join(parts + ([] if f == "__init__.py" else [f[:-3]]))
                     for f in files if f.endswith(".py"))
    return frozenset(names)


#: The package's modules, and the interpreter's table of modules, taken now.
_HARNESS_MODULES = _package_modules()
_MODULES = sys.modules
#: Names the interpreter and its libraries add to a module or class after it was made
#: (a warning's registry, copy's cache of slot names, pydantic's and abc's state).
_LATE_NAMES = frozenset({"__warningregistry__", "__slotnames__"})


def _added_by_python(where: str, key: object, value: object) -> bool:
    """Whether a name added to the harness namespace ``where`` is the interpreter's own
    doing: a submodule imported later (its package gains it: a module, exactly, and the
    very one imported under that name), or one of :data:`_LATE_NAMES`."""
    if type(key) is not str:
        return False
    if key in _LATE_NAMES or key.startswith(("__pydantic", "_abc_")):
        return True
    name = f"{where}.{key}"
    return (type(value) is types.ModuleType and name in _HARNESS_MODULES
            and _MODULES.get(name) is value)


#: What the state check reads of other modules, bound now: an attribute read of a module
#: whose class candidate code changed (to a ``ModuleType`` subclass) would run its code.
_SOCKET, _DEVICE, _TENSOR, _GC_NAMES = socket.socket, torch.device, torch.Tensor, vars(gc)
_device_type = vars(torch.device)["type"].__get__
_CUDA_GRAPH = getattr(torch.cuda, "CUDAGraph", None)
#: The harness's containers on a worker, by attribute, the exact type of each and, for
#: those the worker reads by value (hashed, tested), the one plain type of their items (a
#: tuple: candidate code cannot empty it in place).
_CONTAINERS = (("sets", dict, None), ("sources", dict, None), ("arenas", dict, None),
               ("arena_of", dict, str), ("input_spans", dict, None), ("launches", dict, None),
               ("produced", list, None), ("slots", list, None), ("pinned", list, int))
#: The attributes of an arena, as it makes them, and the exact types each may have: a
#: tensor of another class (or an array, for the CPU's words) would run its own code
#: where the reveal or the input check reads it.
_ARENA_PARTS = (("source", (_TENSOR,)), ("private", (_TENSOR,)),
                ("staged", (_TENSOR, type(None))), ("scratch", (_TENSOR,)),
                ("words", (np.ndarray, type(None))), ("storage", (int,)),
                ("seed", (int, type(None))))  # pairs, not a dict: nothing in it to plant
_ARENA_NAMES = frozenset(name for name, _ in _ARENA_PARTS)


def _of_class(value: object, classes: tuple[type, ...]) -> bool:
    """Whether ``value``'s class is one of ``classes``, told by identity: ``in`` compares
    classes with ``==``, which a class's metaclass answers with its own code (and with
    True for any class)."""
    kind = type(value)
    for each in classes:
        if kind is each:
            return True
    return False


#: A class's own name, read through ``type``'s descriptor: ``type(x).__name__`` would
#: look it up on a metaclass first, which may run code.
_class_name = vars(type)["__name__"].__get__


def _containers_reshaped(state: dict) -> list[str]:
    """The worker's containers (``state``: its attributes) not of their exact type, or, for
    a dict, with a key that is not a plain string: a key of the candidate's class whose
    hash matches a set's would run its ``__eq__`` in the lookups a trial makes."""
    if type(state) is not dict:  # a dict's subclass: its own code at every read
        return ["Worker.__dict__"]
    if _odd_keys(state):  # read first: a lookup in it would meet that key
        return ["Worker.<a name that is not a str>"]
    return [f"Worker.{name}" for name, kind, item_kind in _CONTAINERS
            if type(container := state.get(name)) is not kind
            or (kind is dict and _odd_keys(container))
            or (item_kind is not None and any(  # read by value (hashed, tested): plain
                type(item) is not item_kind
                for item in (container.values() if kind is dict else container)))]


def _graph_plain(graph: object) -> bool:
    """Whether a worker's captured graph is what ``capture`` makes: a plain tuple of the
    graph, the plain list of its sets' ids and the plain list of its calls' outputs (each
    a plain tensor, or a plain tuple or list of them)."""
    if type(graph) is not tuple or len(graph) != 3 or type(graph[1]) is not list \
            or type(graph[2]) is not list or type(graph[0]) is not _CUDA_GRAPH:
        return False
    return all(type(i) is str for i in graph[1]) and all(
        type(out) is _TENSOR or (_of_class(out, (tuple, list))
                                 and all(type(t) is _TENSOR for t in out))
        for out in graph[2])


def _plain_keys(worker: Worker) -> None:
    """Refuse, before a trial's lookups, a container of the worker's that is reshaped."""
    reshaped = _containers_reshaped(vars(worker))
    if reshaped:
        raise CandidateError(f"harness integrity: candidate code replaced {reshaped[0]}")


def _arena_reshaped(arena: object) -> bool:
    """Whether ``arena`` is not an arena as :class:`_Arena` makes it: another class, other
    attribute names, or a part of another type than :data:`_ARENA_PARTS` allows."""
    if type(arena) is not _Arena:
        return True
    parts = vars(arena)
    if type(parts) is not dict or any(type(name) is not str for name in list(parts)):
        return True
    if set(parts) != _ARENA_NAMES or any(
            not _of_class(parts[name], kinds) for name, kinds in _ARENA_PARTS):
        return True
    if any(type(part) is _TENSOR and _not_plain(part) for part in parts.values()):
        return True  # its size or address read would run a subclass's dispatch
    words, private = parts["words"], parts["private"]
    return words is not None and (  # the words the reveal XORs are the private copy's
        _array_dtype(words) is not _WORD  # (a dtype with fields: Python at the next read)
        or _array_interface(words)["data"][0] != _tensor_data_ptr(private)
        or _array_nbytes(words) != _tensor_nbytes(private))


def _arena_parts(arena: object) -> dict:
    """The parts of ``arena`` (its attributes), once they are seen to be what it made:
    read them so, and no code of another class runs in what the harness does with them."""
    if _arena_reshaped(arena):
        raise CandidateError("harness integrity: candidate code replaced a part of an arena")
    return vars(arena)


def _gate_reshaped(parts: dict) -> bool:
    """Whether a launch gate's attributes are not what :class:`LaunchGate` made: other
    names, or a value, word or address of another type (a value near the end of its
    32-bit range too)."""
    if type(parts) is not dict or _odd_keys(parts):  # walked before any key is read
        return True
    value = parts.get("value")
    return (set(parts) != _GATE_NAMES or type(value) is not int
            or not 0 <= value < GATE_VALUE_END or type(parts.get("word")) is not _TENSOR
            or type(parts.get("address")) is not int or type(parts.get("opened")) is not int
            or type(parts.get("deadline")) is not float
            or any(type(parts.get(name)) is not _LOCK for name in ("_lock", "_wake"))
            or not issubclass(type(parts.get("_wait")), _CFuncPtr))


def _state_problems(worker: Worker, lent: tuple | None = None,
                    channel_socket: object = None) -> list[str]:
    """The worker's and its channel's state that candidate code reshaped: another class
    (``__class__`` assigned), an attribute set on the instance over a method of its class
    (a ``send`` that rewrites replies), a harness container or the output slots of
    another type than the harness made (a list whose iteration hides what indexing
    returns), a slot that is not in the memory the audit lent (a meta tensor), or a
    profile or trace hook left set (which can change any of these between a check and
    its use). ``lent``, where given, is the record of the lent slots the serve loop took
    when they were lent: the worker's must still be that very object; so must the
    channel's socket be ``channel_socket`` (the one it had before any candidate code)."""
    problems = []
    if _cleared_hooks():  # first: no hook runs inside the checks below
        problems.append("sys.setprofile or sys.settrace (a hook left set)")
    owner = worker
    for kind, names in ((Worker, _WORKER_NAMES), (Channel, _CHANNEL_NAMES)):
        if type(owner) is not kind:
            problems.append(f"{kind.__name__}.__class__")
            return problems
        # a namespace of a dict's subclass, whose own code would run at each read, or a
        # name that is not exactly a str: any lookup would call its ``__eq__`` (both
        # before the first attribute of the owner is read)
        if type(vars(owner)) is not dict:
            problems.append(f"{kind.__name__}.__dict__")
            return problems
        if _odd_keys(vars(owner)):
            problems.append(f"{kind.__name__}.<an attribute name that is not a str>")
            return problems
        shadowed = set(vars(owner)) & names
        problems += [f"{kind.__name__}.{name}" for name in sorted(shadowed)]
        owner = vars(worker).get("channel")
    sock = vars(worker.channel).get("sock")
    if type(sock) is not _SOCKET or (channel_socket is not None
                                     and sock is not channel_socket):
        problems.append("Channel.sock")
    state = vars(worker)
    problems += _containers_reshaped(state)
    if type(state.get("_device")) is not _DEVICE:
        problems.append("Worker.device")
    gate, device = state.get("gate"), state.get("_device")
    cuda = type(device) is _DEVICE and _device_type(device) == "cuda"
    if not _of_class(gate, (LaunchGate, type(None))) or (gate is not None and (
            _gate_reshaped(vars(gate)) or not cuda)):
        problems.append("Worker.gate")  # (a CPU worker has none)
    graph = state.get("graph")
    if graph is not None and not _graph_plain(graph):
        problems.append("Worker.graph")
    marker = state.get("marker")  # CUPTI's window closes at its fill: one uint8 byte
    if marker is not None and (type(marker) is not _TENSOR or not cuda or _not_plain(marker)
                               or _dtype_of(marker) is not _UINT8
                               or _shape_of(marker) != (1,)
                               or _device_of(marker) != vars(worker).get("_device")):
        problems.append("Worker.marker")
    arenas = state.get("arenas")
    if type(arenas) is dict and any(_arena_reshaped(a) for a in arenas.values()):
        problems.append("Worker.arenas")
    slots, record = state.get("slots"), state.get("lent")
    # the record of the lent memory: plain pairs of plain ints, told before it is compared
    # (an element of another class would answer the comparison with its own code)
    plain = type(record) is tuple and all(
        type(pair) is tuple and len(pair) == 2 and type(pair[0]) is int
        and type(pair[1]) is int for pair in record)
    if type(slots) is list and (not all(  # another type: the containers check above
            type(slot) is list and all(type(t) is _TENSOR and not _not_plain(t)
                                       and _device_of(t).type == "cpu"
                                       and _tensor_data_ptr(t) != 0 for t in slot)
            for slot in slots) or not plain or tuple(
                (_tensor_data_ptr(t), _tensor_nbytes(t)) for slot in slots for t in slot)
            != record):
        problems.append("Worker.slots")
    if lent is not None and state.get("lent") is not lent:
        problems.append("Worker.lent")
    # Code the collector would run between this check and what follows: a callback in the
    # interpreter's own list (whatever the module's name now points at).
    if _gc_callbacks or _odd_keys(_GC_NAMES) or _GC_NAMES.get("callbacks") is not _gc_callbacks:
        problems.append("gc.callbacks (a collector callback left set)")
    if _function_modes() or _dispatch_modes():
        problems.append(_MODES_LEFT)
    if _dispatch_keys() != _DISPATCH_KEYS:
        problems.append(_KEYS_CHANGED)
    return problems


_set_profile, _set_trace = sys.setprofile, sys.settrace
_set_thread_profile, _set_thread_trace = threading.setprofile, threading.settrace
# and their readers, bound now: a reader replaced later would run inside the checks
_get_profile, _get_trace = sys.getprofile, sys.gettrace
_get_thread_profile, _get_thread_trace = threading.getprofile, threading.gettrace


#: What may not change on a harness function in the worker: its code or defaults,
#: changed in place, change what it does without changing the function, which could
#: empty a check (or the hook below) for a moment and give it back.
_FIXED_FUNCTION_PARTS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
#: The package's folder: a function whose code was compiled from a file in it is the
#: harness's.
_HARNESS_HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


#: The audit events of setting a profile, trace or monitoring function (from Python or the
#: C API), which the worker's audit hook vetoes.
_CODE_HOOK_EVENTS = frozenset({"sys.setprofile", "sys.settrace", "sys._setprofileallthreads",
                               "sys._settraceallthreads", "sys.monitoring.register_callback"})
#: The interpreter's C functions that queue work for the main thread (a pending call runs
#: at the next function entry or loop of whatever Python code runs there, the harness's
#: own steps too; one that queues itself again runs at every one) or raise in it, and the
#: C library's own symbol lookups, which would find them by name: the worker's audit hook
#: vetoes looking one up through ``ctypes``. Best effort: an address found another way
#: (the interpreter's symbol table, read from its file) or a compiled extension of the
#: candidate's still reaches them, as it can write the worker's memory
#: (``docs/verdicts.md``, "What remains").
_QUEUE_SYMBOLS = frozenset({"Py_AddPendingCall", "_PyEval_AddPendingCall",
                            "PyThreadState_SetAsyncExc", "PyErr_SetInterrupt",
                            "PyErr_SetInterruptEx", "Py_MakePendingCalls",
                            "dlsym", "dlvsym", "_dl_sym", "_dl_vsym", "__libc_dlsym"})
#: The interpreter's C functions that put native code of the caller's into its own steps:
#: its frame-evaluation function (run at every Python function's entry), its memory
#: allocators (run at every allocation), watchers of dicts, types, functions, code
#: objects and contexts (run at their changes), a reference tracer, a free function of
#: every code object's extra data, and the profile and trace setters (whose audit events
#: the hook vetoes too): vetoed as ``ctypes`` lookups alike, and best effort alike.
_HOOK_SYMBOLS = frozenset({
    "_PyInterpreterState_SetEvalFrameFunc", "PyUnstable_InterpreterState_SetEvalFrameFunc",
    "PyMem_SetAllocator", "PyObject_SetArenaAllocator", "PyMem_SetupDebugHooks",
    "PyDict_AddWatcher", "PyDict_Watch", "PyType_AddWatcher", "PyType_Watch",
    "PyFunction_AddWatcher", "PyCode_AddWatcher", "PyContext_AddWatcher",
    "PyRefTracer_SetTracer", "_PyEval_RequestCodeExtraIndex",
    "PyUnstable_Eval_RequestCodeExtraIndex", "PyEval_SetProfile", "PyEval_SetTrace",
    "PyEval_SetProfileAllThreads", "PyEval_SetTraceAllThreads", "_PyEval_SetProfile",
    "_PyEval_SetTrace"})
#: The interpreter's C functions that write what Python code cannot reach without an audit
#: event: a frame's local variables written back from its locals dict (the trial's bound
#: functions, the serve loop's), a closure's cell, a function's defaults or closure.
#: Vetoed as ``ctypes`` lookups alike, and best effort alike.
_STATE_SYMBOLS = frozenset({
    "PyFrame_LocalsToFast", "PyFrame_FastToLocals", "PyFrame_FastToLocalsWithError",
    "_PyFrame_LocalsToFast", "PyCell_Set", "PyFunction_SetDefaults",
    "PyFunction_SetKwDefaults", "PyFunction_SetClosure", "PyFunction_SetVectorcall",
    "PyFunction_SetAnnotations"})
#: Each list of C functions the worker's audit hook refuses to look up, with the reason.
_REFUSED_SYMBOLS = (
    (_QUEUE_SYMBOLS, "it queues work or exceptions for the main thread, or finds what does"),
    (_HOOK_SYMBOLS, "it puts native code into the interpreter's own steps"),
    (_STATE_SYMBOLS, "it writes frames, cells or functions, the harness's among them"))
#: The interpreter's modules made for its own tests, vetoed as imports in the worker:
#: ``_testcapi`` queues pending calls from Python (``_pending_threadfunc``), and they
#: expose more of the interpreter's internals; no kernel needs them.
_TEST_MODULES = frozenset({"_testcapi", "_testinternalcapi", "_testmultiphase",
                           "_testbuffer", "_testimportmultiple", "_testsinglephase",
                           "_testclinic", "_testconsole", "_ctypes_test", "_xxtestfuzz"})


def _refuse_audit_hooks(event: str, args: tuple, _parts=_FIXED_FUNCTION_PARTS,
                        _home=_HARNESS_HOME, _type=type, _str=str, _len=len, _id=id,
                        _function=types.FunctionType, _error=RuntimeError,
                        _hooks=_CODE_HOOK_EVENTS, _refused=_REFUSED_SYMBOLS,
                        _tests=_TEST_MODULES,
                        _protected=frozenset(),
                        _modules=frozenset(), _classes=frozenset()) -> None:
    """The worker's audit hook, added before any candidate code: it vetoes every later
    ``sys.addaudithook`` (from Python or the C API), so none of a candidate's runs, and
    every change of a harness function's code or defaults (its own among them): one
    compiled from a file of the package, or one of ``_protected`` (the ids of every
    function the harness's namespaces held when the hook was added, generated methods
    among them). It also vetoes a new class for any module of ``_modules`` (the ids of
    the modules loaded before any candidate code): a module whose class became a
    subclass of the candidate's would run its code in every read of an attribute
    (``torch.strided``, ``gc.callbacks``), inside the checks too; and a new class for any
    object whose class is one of ``_classes`` (the ids of the harness's own classes, of
    torch's operator objects and of sockets): a worker whose class became the
    candidate's would run its code at every attribute the trial reads. It reads nothing but
    its arguments and defaults, which only that vetoed change could replace: no global a
    candidate could rebind first. And it vetoes every profile, trace and monitoring
    function (``_hooks``): one runs inside every harness function, and a profile or trace
    function's changes to a frame's locals are written back into the frame, so it could
    replace what the serve loop compares its checks with. It vetoes looking up the
    interpreter's queues for the main thread (:data:`_QUEUE_SYMBOLS`), its native hooks
    (:data:`_HOOK_SYMBOLS`) and the writers of frames, cells and functions
    (:data:`_STATE_SYMBOLS`) through ``ctypes``, and importing its test modules, which
    reach them from Python."""
    if event == "sys.addaudithook":
        raise _error("audit hooks are not allowed in the worker")
    if event in _hooks:
        raise _error("profile, trace and monitoring functions are not allowed in the worker")
    if (event == "ctypes.dlsym" or event == "ctypes.dlsym/handle") and _len(args) > 1 \
            and _type(args[1]) is _str:
        for symbols, why in _refused:
            if args[1] in symbols:
                raise _error(f"{args[1]} may not be looked up through ctypes in the worker "
                             f"({why})")
    if event == "import" and _len(args) > 0 and _type(args[0]) is _str and args[0] in _tests:
        raise _error(f"{args[0]}: the interpreter's test modules are not allowed in the "
                     f"worker")
    if event == "object.__setattr__" and _len(args) > 1 and _type(args[1]) is _str \
            and args[1] == "__class__":
        if _id(args[0]) in _modules:
            raise _error("the class of a module loaded before the candidate may not change "
                         "in the worker")
        if _id(_type(args[0])) in _classes or _id(args[0]) in _classes:
            raise _error("the class of an object of the harness's may not change in the "
                         "worker")
    if event == "object.__setattr__" and _len(args) > 1 and _type(args[1]) is _str \
            and args[1] in _parts and _type(args[0]) is _function \
            and (_id(args[0]) in _protected
                 or args[0].__code__.co_filename.startswith(_home)):
        raise _error(f"a harness function's {args[1]} may not change in the worker")


def _harness_functions(baseline: Snapshot) -> frozenset[int]:
    """The ids of the functions the harness's namespaces hold (methods behind
    ``staticmethod``, ``classmethod`` and ``property`` too); each stays alive with its
    namespace, so no other object takes its id."""
    found = set()
    for _, _, items in baseline:
        for _, value, _ in items:
            parts = ([value.__func__] if isinstance(value, staticmethod | classmethod)
                     else [value.fget, value.fset, value.fdel]
                     if isinstance(value, property) else [value])
            found.update(id(part) for part in parts if type(part) is types.FunctionType)
    return frozenset(found)


def _harness_classes(saved: PathNames) -> frozenset[int]:
    """The ids of the classes whose objects' class may not change in the worker: the
    classes of the message path's modules (the worker, its channel, gate and arenas),
    torch's operator objects (whose tables the kernel check reads) and sockets."""
    kinds = [kind for *_, kind in saved if kind is not None]
    kinds += [torch._ops.OpOverload, torch._ops.OpOverloadPacket, socket.socket,
              _socket.socket]
    return frozenset(map(id, kinds))


def _cleared_hooks() -> bool:
    """Remove this thread's profile and trace functions and those ``threading`` gives new
    threads, so that no candidate code runs inside the checks that follow; True when one
    was set (tampering: the worker's audit hook refuses every one, so only a write to the
    process's memory could have set it, and clearing it is refused the same way)."""
    visible = any(hook is not None for hook in (_get_profile(), _get_trace(),
                                                 _get_thread_profile(),
                                                 _get_thread_trace()))
    _set_thread_profile(None)
    _set_thread_trace(None)
    if visible:
        for clear in (_set_profile, _set_trace):
            try:
                clear(None)
            except RuntimeError:  # the veto: nothing more to do from Python
                pass
    return visible


def _span(t: torch.Tensor) -> tuple[int, int, str]:
    """Where a plain tensor of the worker's lies: its storage's first and end address and
    its device. One that carries a key no plain dense tensor has is refused before any of
    that is read (its device or size read would run a subclass's dispatch: the
    candidate's code, with ``__class__`` set back to ``torch.Tensor`` in the worker's
    inputs or slots)."""
    if _not_plain(t):
        raise CandidateError("harness integrity: candidate code replaced a tensor of the "
                             "worker's with one that carries a dispatch key no plain dense "
                             "tensor has")
    storage = _untyped_storage(t)
    start = _storage_data_ptr(storage)
    return start, start + _storage_nbytes(storage), str(_device_of(t))


def _tensor_spans(values: list[object] | tuple[object, ...]) -> tuple[int | str, ...]:
    """Where each plain tensor of ``values`` lies, flattened: its index, first and end
    address, and device, in order (plain ints and strs, which compare with no code of
    anyone's). A tensor of another class is not one: a list in which a candidate replaced
    a tensor, or put one of its own class, spans otherwise."""
    flat: list[int | str] = []
    for i, t in enumerate(values):
        if type(t) is _TENSOR:
            start, end, device = _span(t)
            flat += [i, start, end, device]
    return tuple(flat)


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    return a[2] == b[2] and a[0] < b[1] and b[0] < a[1] and a[0] != a[1] and b[0] != b[1]


class _Ranges:
    """Byte ranges of memory, per device, kept as the sorted starts and ends of their
    union: whether a span overlaps any of them (as :func:`_overlaps` tells) is one
    bisection, not a pass over all of them. A trial of 50 calls checks each output
    against every earlier output and every lent slot: one pass each cost the worker
    milliseconds of host time a trial, whose noise the host guard then read as work."""

    def __init__(self, spans: list[tuple[int, int, str]],
                 _sorted=sorted, _bisect=bisect.bisect_left) -> None:
        self._bisect = _bisect
        self.starts: dict[str, list[int]] = {}
        self.ends: dict[str, list[int]] = {}
        for start, end, device in _sorted(s for s in spans if s[0] != s[1]):
            starts = self.starts.setdefault(device, [])
            ends = self.ends.setdefault(device, [])
            if starts and start < ends[-1]:  # overlaps the last: one range of both
                ends[-1] = max(ends[-1], end)
            else:
                starts.append(start)
                ends.append(end)

    def hits(self, span: tuple[int, int, str]) -> bool:
        """Whether ``span`` overlaps any range (an empty span overlaps nothing)."""
        start, end, device = span
        starts = self.starts.get(device)
        if start == end or not starts:
            return False
        last = self._bisect(starts, end) - 1  # the last range that starts before the end
        return last >= 0 and self.ends[device][last] > start

    def add(self, span: tuple[int, int, str]) -> None:
        """Add ``span``, which overlaps no range (:meth:`hits` said so)."""
        start, end, device = span
        if start == end:
            return
        starts = self.starts.setdefault(device, [])
        at = self._bisect(starts, start)
        starts.insert(at, start)
        self.ends.setdefault(device, []).insert(at, end)


def _described(out: torch.Tensor) -> dict:
    """An output that did not go into its slot, as the reply names it."""
    return {"dtype": str(_dtype_of(out)).removeprefix("torch."), "shape": list(_shape_of(out))}


#: A tensor's methods as the C type has them: a method set on a tensor instance (a plain
#: tensor takes attributes) would be the candidate's code where the harness calls it.
_reshape, _view, _to = _TENSOR_BASE["reshape"], _TENSOR_BASE["view"], _TENSOR_BASE["to"]
_equal = torch.equal


def _same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    return _equal(_view(_reshape(a, (-1,)), _UINT8), _view(_reshape(b, (-1,)), _UINT8))


class CandidateError(Exception):
    """An output the worker refuses to copy: not a fresh, plain, dense tensor (the audit
    turns the text into a RUNTIME_ERROR; it never decides a status)."""


def poison(tensor: torch.Tensor) -> None:
    """Fill a graph's output buffer with values no correct kernel leaves behind."""
    dtype = _dtype_of(tensor)
    _fill(tensor, float("nan") if dtype.is_floating_point else True if dtype is _BOOL else -7)


class _Arena:
    """A trial's masked arena in this worker: the shared bytes as staged and a private
    copy (on the worker's device) that the candidate's inputs are views of. On CPU the
    private copy is the writable memfd the audit lent (``lent``), which the audit reads
    after each trial to see that no input changed."""

    def __init__(self, source: torch.Tensor, device: torch.device,
                 lent: torch.Tensor | None = None) -> None:
        self.source = source
        if device.type == "cpu":
            if lent is None or lent.shape != source.shape or lent.dtype != source.dtype:
                raise RuntimeError("a CPU arena needs its private copy lent, of its shape")
            self.private = lent
            self.private.copy_(source)
        else:
            self.private = source.to(device, copy=True)
        #: (GPU) The masked bytes as staged, copied on the device from the private copy
        #: before any unmask: the input check reads them there, not again from the host.
        self.staged = None if device.type == "cpu" else self.private.clone()
        # the mask, drawn inside the request; its pages faulted in now, outside the clock
        # (the stand-in's runs never pay them)
        self.scratch = torch.zeros_like(self.private)
        #: (CPU) The private copy's words, which the reveal XORs: made here, so that the
        #: reveal reads no tensor method a candidate's subclass could answer.
        self.words = words_of(self.private) if device.type == "cpu" else None
        self.storage = _untyped_storage(source).data_ptr()
        self.seed: int | None = None

    def view_of(self, value: torch.Tensor, base: torch.Tensor | None = None) -> torch.Tensor:
        """The counterpart of ``value`` (a view of the shared source) in ``base`` (by
        default the private copy)."""
        base = self.private if base is None else base
        return torch.empty(0, dtype=value.dtype, device=base.device).set_(
            _untyped_storage(base), value.storage_offset(), value.shape, value.stride())

    def unmasked_source(self) -> torch.Tensor:
        """What the private copy must hold after the last unmask (for the input check)."""
        parts = _arena_parts(self)
        staged, seed = parts["staged"], parts["seed"]
        expected = (parts["source"].to(parts["private"].device, copy=True) if staged is None
                    else staged.clone())
        if seed is not None:
            unmask(expected, seed, parts["scratch"])
        return expected

    def reveal(self, seed: int) -> None:
        """Unmask the private copy with ``seed``'s stream (inside the clocked request)."""
        parts = _arena_parts(self)
        parts["seed"] = seed
        if parts["words"] is not None:
            unmask_words(parts["words"], seed)
        else:
            unmask(parts["private"], seed, parts["scratch"])


class LaunchGate:
    """A word of page-locked host memory that a graph trial's stream waits on
    (``cuStreamWaitValue32``) ahead of its start event, written by this process once the
    replay's launch has returned: the events start when the work is on the device, however
    long the launch took. (Behind a fixed lead sleep, a one-call replay that reached the
    device after the sleep ended counted the rest of its launch: on the H100, 182 us
    a call for a QSA decode whose kernels span 147 us, and 148 us behind the gate;
    ``results/h100/2026-12-05-h100-launch-gap/``.)

    A graph's launch runs no candidate code and needs no device progress, so the gate
    never waits on the candidate; a watchdog thread, started with the gate (before any
    candidate code) and armed by every close, opens it after :data:`GATE_MAX_S` anyway.
    A trial starts no thread: what the gate costs a request (a driver call, a lock) is
    the same small cost in the candidate's worker and the stand-in's. Nothing
    of the candidate's runs while the gate is closed (the device was synchronised before,
    and the replay's work is queued behind it on the one stream)."""

    def __init__(self) -> None:
        cuda = ctypes.CDLL("libcuda.so.1")
        self._wait = getattr(cuda, "cuStreamWaitValue32_v2", None) or cuda.cuStreamWaitValue32
        self.word = torch.zeros(1, dtype=torch.int32, pin_memory=True)
        address = ctypes.c_uint64()
        result = cuda.cuMemHostGetDevicePointer_v2(
            ctypes.byref(address), ctypes.c_void_p(self.word.data_ptr()), ctypes.c_uint(0))
        if result != 0:
            raise RuntimeError(f"cuMemHostGetDevicePointer returned CUDA error {result}")
        self.address = address.value
        self.value = 0
        self.opened = 0
        self.deadline = 0.0
        # The interpreter's own locks (C), nothing of ``threading``'s Python classes,
        # whose methods candidate code could replace: the gate opens right after the
        # calls. ``_wake`` is held while the watchdog has nothing to wait for.
        self._lock, self._wake = _Lock(), _Lock()
        self._wake.acquire()
        _Thread(target=self._watch, name="hf-eval-gate", daemon=True).start()

    def close(self, stream: int) -> None:
        """Make ``stream`` (a CUDA stream's handle: the trial's) wait until :meth:`open`
        (a value above the last), and wake the watchdog."""
        if _gate_reshaped(vars(self)):
            raise CandidateError("harness integrity: candidate code replaced Worker.gate")
        with self._lock:
            self.deadline = _monotonic() + GATE_MAX_S
            self.value += 1
        result = self._wait(ctypes.c_void_p(stream), ctypes.c_uint64(self.address),
                            ctypes.c_uint32(self.value),
                            ctypes.c_uint(0))  # CU_STREAM_WAIT_VALUE_GEQ
        if result != 0:
            raise RuntimeError(f"cuStreamWaitValue32 returned CUDA error {result}")
        if self._wake.locked():
            self._wake.release()

    def open(self) -> None:
        """Let the stream go on (the watchdog then has nothing to open)."""
        if _gate_reshaped(vars(self)):
            raise CandidateError("harness integrity: candidate code replaced Worker.gate")
        with self._lock:
            self.opened = self.value
            _fill(self.word, self.value)

    def _watch(self) -> None:
        """The watchdog: once woken by a close, open the gate at its deadline unless it
        was opened."""
        while True:
            self._wake.acquire()
            while True:
                left = self.deadline - _monotonic()
                if left > 0:
                    _host_sleep(left)
                    continue
                with self._lock:
                    if self.opened != self.value:
                        self.opened = self.value
                        _fill(self.word, self.value)
                break


#: The attributes of a launch gate, as it makes them.
_GATE_NAMES = frozenset({"_wait", "word", "address", "value", "opened", "deadline", "_wake",
                         "_lock"})


class Worker:
    @property
    def device(self, _vars=vars, _type=type) -> torch.device:
        """The device this worker serves, read through here and told to be a
        ``torch.device`` at every read: an object of the candidate's put in its place
        would run its own code where the harness reads the device (``.type``), after
        the names were put back."""
        device = _vars(self).get("_device")
        if _type(device) is not _DEVICE:
            raise CandidateError("harness integrity: candidate code replaced Worker.device")
        return device

    @device.setter
    def device(self, value: torch.device, _vars=vars, _type=type) -> None:
        if _type(value) is not _DEVICE:
            raise CandidateError("harness integrity: candidate code replaced Worker.device")
        _vars(self)["_device"] = value

    def __init__(self, channel: Channel, walls: list[str]) -> None:
        self.channel = channel
        self.walls = walls
        self.entry: Entry | None = None
        self.device = torch.device("cpu")
        #: Whether ``warm`` or ``load`` has taken the device (the timed path run once).
        self.device_taken = False
        self.sets: dict[str, list[object]] = {}  # id -> inputs on the worker's device
        self.sources: dict[str, list[object]] = {}  # id -> the shared CPU inputs
        #: id -> where its inputs' and sources' tensors lay when they were registered
        #: (:func:`_tensor_spans`): a set whose tensors were replaced since spans otherwise.
        self.input_spans: dict[str, tuple[tuple[int | str, ...], tuple[int | str, ...]]] = {}
        self.arenas: dict[str, _Arena] = {}  # id -> a trial's masked arena
        self.arena_of: dict[str, str] = {}  # set id -> arena id
        self.launches: dict[str, Callable[[], object]] = {}
        self.graph: tuple[torch.cuda.CUDAGraph, list[str], list[object]] | None = None
        self.produced: list[tuple[str, object]] = []  # (set id, outputs) of the last trial
        #: Output slots the audit registered (shared CPU memory, call index -> outputs):
        #: a trial copies call k's outputs into slot k, so no memory is allocated or sent
        #: inside the clocked request.
        self.slots: list[list[torch.Tensor]] = []
        #: (address, bytes) of every lent slot tensor, in order, as the audit lent them.
        self.lent: tuple[tuple[int, int], ...] = ()
        self.pinned: list[int] = []
        #: (Stand-in workers only) the outputs to return instead of calling a candidate,
        #: one distinct copy per call a trial may make (as a candidate's calls return
        #: distinct tensors), and a one-kernel CUDA graph to replay where a candidate's
        #: graph would be: the stand-in's request then costs what the candidate's costs,
        #: less the candidate's own work (never more).
        self.stand_in: list[torch.Tensor] | None = None
        self.stand_in_calls: list[list[torch.Tensor]] = []
        self.stand_in_graph: tuple[torch.cuda.CUDAGraph, torch.Tensor] | None = None
        #: CUPTI's trace while the audit has armed it, and the end marker's tensor.
        self.profiler: torch.profiler.profile | None = None
        self.marker: torch.Tensor | None = None
        #: The graph trials' launch gate (CUDA, where the driver offers stream memory
        #: operations; else None and a graph trial is led by the sleep, as eager ones).
        self.gate: LaunchGate | None = None

    # ----------------------------------------------------------------- inputs
    def register(self, request: dict) -> dict:
        """Keep input sets. On CUDA, upload them (a tensor shared by sets is uploaded
        once); inputs that are views of a masked arena become views of this worker's
        private copy of it (on CPU too), and ``SAME_AS`` references resolve to the
        tensor another set already holds."""
        arena = None
        if request.get("arena") is not None:
            arena = _Arena(request["arena"]["buffer"], self.device,
                           request["arena"].get("private"))
            self.arenas[request["arena"]["id"]] = arena
        uploaded: dict[int, torch.Tensor] = {}
        for set_id, inputs in request["sets"].items():
            sources, on_device = [], []
            for value in inputs:
                source = value
                if isinstance(value, tuple) and len(value) == 3 and value[0] == SAME_AS:
                    inputs, others, _ = self._inputs_of(value[1])
                    source, value = others[value[2]], inputs[value[2]]
                elif isinstance(value, torch.Tensor):
                    if arena is not None and _untyped_storage(value).data_ptr() == arena.storage:
                        value = arena.view_of(value)
                    elif self.device.type != "cpu":
                        key = value.data_ptr()
                        if key not in uploaded:
                            uploaded[key] = value.to(self.device)
                        value = uploaded[key]
                sources.append(source)
                on_device.append(value)
            self.sources[set_id] = sources
            self.sets[set_id] = on_device
            self.input_spans[set_id] = (_tensor_spans(on_device), _tensor_spans(sources))
            if arena is not None:
                self.arena_of[set_id] = request["arena"]["id"]
        self._sync()
        return {}

    def reload(self, request: dict) -> dict:
        """Copy a masked arena's shared bytes (rewritten by the audit) into the private
        copy, outside any clocked request: the content stays masked until a trial."""
        parts = _arena_parts(self.arenas[request["arena"]])
        parts["private"].copy_(parts["source"])
        if parts["staged"] is not None:
            parts["staged"].copy_(parts["private"])
        parts["seed"] = None
        self._sync()
        return {}

    def refresh(self, request: dict) -> dict:
        """Copy the shared inputs' current content into the device copies (after the audit
        rewrote them in place: the second input set)."""
        if self.device.type == "cuda":
            for set_id in request["ids"]:
                for mine, source in zip(*self._inputs_of(set_id)[:2]):
                    if type(mine) is _TENSOR and mine is not source:
                        _copy(mine, source, non_blocking=False)
        self._sync()
        return {}

    def forget(self, request: dict) -> dict:
        # The request's fields first: the collection runs the candidate's finalizers.
        ids, graph = list(request["ids"]), request.get("graph")
        _gc_collect()  # outside any clock (automatic collection is off: _quiet_collector)
        for set_id in ids:
            self.sets.pop(set_id, None)
            self.sources.pop(set_id, None)
            self.input_spans.pop(set_id, None)
            self.launches.pop(set_id, None)
            self.arena_of.pop(set_id, None)
        live = set(self.arena_of.values())  # an arena goes with the last set that used it
        for arena_id in [a for a in self.arenas if a not in live]:
            del self.arenas[arena_id]
        if graph:
            self.graph = None
        return {}

    def set_slots(self, request: dict) -> dict:
        """Take the audit's output slots; on CUDA, pin them (page-locked) so the copies
        into them are plain DMA transfers of predictable cost (unpinned, the copies are
        still correct, only slower: the reply says how many were pinned)."""
        self._unpin()
        self.slots = request["slots"]
        # Where the lent memory lies, as plain integers: a slot list refilled with other
        # tensors (which the copies would then go to) no longer matches it.
        self.lent = tuple((_tensor_data_ptr(t), _tensor_nbytes(t))
                          for outputs in self.slots for t in outputs)
        if self.stand_in is not None:
            self.stand_in_calls = [[t.clone() for t in self.stand_in] for _ in self.slots]
        if self.device.type == "cuda":
            try:
                cudart = torch.cuda.cudart()
                for outputs in self.slots:
                    for t in outputs:
                        ptr = t.data_ptr()
                        if t.numel() and int(cudart.cudaHostRegister(ptr, t.nbytes, 0)) == 0:
                            self.pinned.append(ptr)
            except Exception:  # noqa: BLE001 - no pinning here: pageable copies instead
                pass
        return {"pinned": len(self.pinned)}

    def _unpin(self) -> None:
        if self.pinned:
            cudart = torch.cuda.cudart()
            for ptr in self.pinned:
                cudart.cudaHostUnregister(ptr)
        self.pinned = []

    # ----------------------------------------------------------------- calls
    def prepare(self, request: dict) -> dict:
        """``prepare`` on each set's buffers; the audit then rewrites their content."""
        for set_id in request["ids"]:
            self.launches[set_id] = self.entry.prepare(*self.sets[set_id])
        self._sync()
        return {}

    def _inputs_of(self, set_id: str, sources: bool = True
                   ) -> tuple[tuple[object, ...], tuple[object, ...] | None,
                              tuple[int | str, ...]]:
        """Copies of set ``set_id``'s inputs (and of their sources, unless not
        ``sources``), once their tensors are seen to be the plain tensors registered, where
        they were: no tensor of another class (whose methods are its own code) reaches the
        checks that read them, and a list changed afterwards changes nothing of what they
        read. Returns the inputs, the sources (None where not asked for) and the inputs'
        spans (:func:`_tensor_spans`)."""
        recorded = self.input_spans.get(set_id)
        lists = (self.sets.get(set_id), self.sources.get(set_id) if sources else None)
        copies = tuple(tuple(values) if type(values) is list else None for values in lists)
        if (type(recorded) is not tuple or len(recorded) != 2 or not all(
                type(spans) is tuple and all(_of_class(part, (int, str)) for part in spans)
                for spans in recorded)
                or copies[0] is None or (sources and copies[1] is None)
                or any(values is not None and _tensor_spans(values) != spans
                       for values, spans in zip(copies, recorded))):
            raise CandidateError("harness integrity: candidate code replaced an input of "
                                 "a call")
        return copies[0], copies[1], recorded[0]

    def _call(self, method: str, set_id: str) -> Callable[[], object]:
        if method == "prepared":
            return self.launches[set_id]
        inputs = self.sets[set_id]
        return lambda: self.entry.run(*inputs)

    def capture(self, request: dict) -> dict:
        """One CUDA graph over one call per set (prepared launches where there are)."""
        ids, method = request["ids"], request["method"]
        calls = [self._call(method, i) for i in ids]
        stream = torch.cuda.Stream(self.device)
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream):
            for fn in calls[:3]:  # warm up outside capture (allocator, lazy init, tuning)
                fn()
        torch.cuda.current_stream(self.device).wait_stream(stream)
        _synchronize(self.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = [fn() for fn in calls]
        self.graph = (graph, ids, outputs)
        self._sync()
        return {}

    def _checked(self, produced: object, set_id: str, spans: _Ranges,
                 slots: _Ranges, _span=_span, _overlaps=_overlaps,
                 _tensor=_TENSOR, _strided=_STRIDED, _layout_of=_layout_of,
                 _is_meta=_is_meta, _requires_grad=_requires_grad, _device_of=_device_of,
                 _detach=_detach, _not_plain=_not_plain) -> list[torch.Tensor]:
        """The outputs ``produced`` by the call on set ``set_id``, checked: plain, dense
        tensors of the worker's device type that alias no input, no earlier output and no
        slot. What it calls and reads is bound in its defaults (the worker's audit hook
        refuses a new defaults tuple)."""
        if _of_class(produced, (tuple, list)):
            outputs = tuple(produced)
        elif issubclass(type(produced), (tuple, list)):  # its iteration: candidate code
            raise CandidateError(f"outputs are a {_class_name(type(produced))}, not a "
                                 "plain tuple or list")
        else:
            outputs = (produced,)
        flat = self._inputs_of(set_id, sources=False)[2]
        input_spans = [(flat[k], (flat[k + 1], flat[k + 2], flat[k + 3]))
                       for k in range(0, len(flat), 4)]
        checked = []
        for index, out in enumerate(outputs):
            if type(out) is not _tensor:
                raise CandidateError(f"output {index} is {_class_name(type(out))}, not a "
                                     "plain torch.Tensor")
            if _not_plain(out):  # first: every read below may dispatch on its keys
                raise CandidateError(f"output {index} carries a dispatch key no plain dense "
                                     "tensor has (a subclass's, a wrapper's, a nested, "
                                     "sparse, quantized or zero tensor's, or a lazy "
                                     "negation's or conjugation's)")
            if _layout_of(out) is not _strided or _is_meta(out) or _requires_grad(out):
                raise CandidateError(f"output {index} must be a dense, materialised tensor "
                                     "without autograd history")
            if _device_of(out).type != self.device.type:
                raise CandidateError(f"output {index} is on {_device_of(out)}, the inputs "
                                     f"on {self.device}")
            span = _span(out)
            for i, other in input_spans:
                if _overlaps(span, other):
                    raise CandidateError(f"output {index} aliases input {i}")
            if spans.hits(span):
                raise CandidateError(f"output {index} aliases an output of another call "
                                     "(a cached or reused result)")
            if slots.hits(span):
                raise CandidateError(f"output {index} lies in the harness's output slots "
                                     "(outputs are the candidate's own tensors)")
            spans.add(span)
            checked.append(_detach(out))
        return checked

    def collect(self, request: dict, _checked=_checked, _state_problems=_state_problems,
                _span=_span, _described=_described, _shape_of=_shape_of,
                _dtype_of=_dtype_of, _copy=_copy, _synchronize=_cuda_synchronize,
                _ranges=_Ranges, _kept=_KEPT, _tensor_names=_TENSOR_NAMES,
                _tensor_dispatch=_TENSOR_DISPATCH) -> dict:
        """Check the last trial's outputs (type, density, device, aliasing: what only this
        process can see) and copy call k's into slot k. Per call, per output: None when
        it is in its slot, else its dtype and shape (it did not fit: the audit names the
        mismatch). A call that returned another number of outputs copies none of them.
        What it calls and reads of the outputs is bound in its defaults, as in
        :meth:`_checked`: no lookup by name that candidate code could have redirected for
        one request."""
        n_outputs = request["n_outputs"]
        entries, spans = [], _ranges([])
        _gc_disable()  # as the harness left it: no collection (and no callback) in here
        if _gc_isenabled():
            raise CandidateError("harness integrity: candidate code replaced gc.disable")
        # An output in a slot would skip its own copy, which the stand-in pays. After the
        # check, nothing here runs candidate code: the containers are of the exact types
        # the check saw, taken as they are now, and every output is a plain tensor.
        problems = _state_problems(self)
        if problems:
            raise CandidateError(f"harness integrity: candidate code replaced {problems[0]}")
        replaced = _kernels_replaced(_OPS_AFTER_CALLS)  # again: the copies follow
        if replaced is not None:
            raise CandidateError(f"harness integrity: candidate code replaced {replaced}")
        # A finalizer on every tensor would run, as a tensor dies, inside the copies below
        # (the detached views of the outputs, say) or between them and the send.
        if _odd_keys(_tensor_names) or "__del__" in _tensor_names:
            raise CandidateError("harness integrity: candidate code replaced "
                                 "torch.Tensor.__del__")
        for name, value in _tensor_dispatch:  # what a subclass's dispatch would reach
            if _tensor_names.get(name) is not value:
                raise CandidateError(f"harness integrity: candidate code replaced "
                                     f"torch.Tensor.{name}")
        lent = [tuple(slot) for slot in self.slots]
        # Every object made here stays alive until the reply has left (the serve loop
        # holds what this returns under _KEPT): none dies, and runs code, before then.
        held = []
        produced_now = list(self.produced)
        if not all(type(e) is tuple and len(e) == 2 and type(e[0]) is str
                   for e in produced_now):
            raise CandidateError("harness integrity: candidate code replaced Worker.produced")
        slots = _ranges([_span(t) for slot in lent for t in slot])
        for index, (set_id, produced) in enumerate(produced_now):
            outputs = _checked(self, produced, set_id, spans, slots)
            held.append(outputs)
            slot = lent[index] if index < len(lent) else None
            if slot is None:
                raise CandidateError(f"call {index + 1} has no output slot")
            if len(outputs) != n_outputs:  # every output named: the audit counts them
                if len(outputs) > MAX_OUTPUTS:
                    raise CandidateError(f"call {index + 1} returned {len(outputs)} outputs")
                entries.append([_described(out) for out in outputs])
                continue
            entry = []
            for out, target in zip(outputs, slot):
                if _shape_of(out) == _shape_of(target) and _dtype_of(out) is _dtype_of(target):
                    _copy(target, out, non_blocking=True)
                    entry.append(None)
                else:
                    entry.append(_described(out))
            entries.append(entry)
        if self.device.type == "cuda":
            _synchronize()
        self.produced = []
        return {"outputs": entries, _kept: (held, lent, produced_now)}

    def trial(self, request: dict, _collect=collect, _saved: PathNames = (),
              _put: Callable | None = None) -> dict:
        """The one path of every call, in one request the audit clocks from outside:
        unmask this trial's content (``unmask``: the arena and the seed), evict the L2
        cache when asked (``flush``: no input is then L2-resident), run the calls back to
        back, wait for the whole device, and copy every output into its slot.

        The device time of the calls is measured twice: by CUDA events on the current
        stream, started behind the launch gate in a graph trial (:class:`LaunchGate`: when
        the replay's launch has returned) and behind a short sleep kernel in an eager one,
        so that the host's launch latency is not in it, and, when the audit armed CUPTI
        (:meth:`arm`), by the span of every device activity from the lead sleep to an end
        marker (read by :meth:`disarm`, after the clock). Both are this process's claims:
        the audit's host clock guards them.

        A stand-in worker (never loaded with a candidate) returns staged tensors instead
        of calling anything (in graph mode it poisons them and replays a one-kernel graph,
        as a candidate's graph is poisoned and replayed): the audit times it to learn what
        this request costs without a candidate."""
        t_start = _perf_counter()
        # Every field read first, before any candidate code and any check: the request is
        # a dict the candidate's calls could reach (through a frame) and change in place.
        refresh, unmask, method, ids, flush, n_outputs = (
            request.get("refresh"), request.get("unmask"), request["method"],
            list(request["ids"]), request.get("flush"), request["n_outputs"])
        _plain_keys(self)
        # no torch mode before the harness's first torch operation (the reveal's): one
        # pushed since the loop's top would run its code there, before the clock
        if _drop_modes(_LEFTOVERS):
            raise CandidateError(f"harness integrity: candidate code replaced {_MODES_LEFT}")
        # The device and CUPTI's end marker, read once and told to be the harness's: read
        # after the calls, an object put there by them would run its code in the harness's
        # steps (``.type``, the marker's fill), after the names were put back.
        cuda = _device_type(self.device) == "cuda"
        marker = self.marker if cuda and self.profiler is not None else None
        if marker is not None and (type(marker) is not _TENSOR or _not_plain(marker)):
            raise CandidateError("harness integrity: candidate code replaced Worker.marker")
        # The list the last trial left (its calls' outputs go there next): held here, so
        # that the assignment after the calls frees nothing (an object of the candidate's
        # put in it would run its finalizer there, between the clock and the copies).
        previous = self.produced
        stand_in = self.stand_in  # read once: a thread that sets it later changes nothing
        # and the captured graph, told to be what ``capture`` made before it is read (an
        # object of the candidate's would run its own code at each index)
        graph = self.graph
        if graph is not None and not _graph_plain(graph):
            raise CandidateError("harness integrity: candidate code replaced Worker.graph")
        op = _kernels_replaced(_OPS_BEFORE_CALLS)
        if op is None and _dispatch_keys() != _DISPATCH_KEYS:  # before the flush, the poisoning
            op = _KEYS_CHANGED
        if op is not None:
            raise CandidateError(f"harness integrity: candidate code replaced {op}")
        if refresh:
            self.refresh({"ids": refresh})
        if unmask:
            _Arena.reveal(self.arenas[unmask["arena"]], unmask["seed"])
        if method == "graph":
            graph_outputs = (self.stand_in_calls[:len(ids)] if stand_in is not None
                             else graph[2] if graph is not None else [])
            for outputs in graph_outputs:
                for out in outputs if _of_class(outputs, (tuple, list)) else (outputs,):
                    if type(out) is _TENSOR and _not_plain(out):
                        raise CandidateError("a graph output carries a dispatch key no plain "
                                             "dense tensor has")
                    if type(out) is _TENSOR:
                        poison(out)
        if flush and cuda:
            self._flush_l2(flush)
        t_inputs = _perf_counter()
        if stand_in is not None and method == "graph":
            calls = [self.stand_in_graph[0].replay]
        elif stand_in is not None:
            calls = [lambda staged=tuple(staged): staged
                     for staged in self.stand_in_calls[:len(ids)]]
        elif method == "graph":
            calls = [graph[0].replay]
        else:
            calls = [self._call(method, i) for i in ids]
        if cuda:
            _cuda_synchronize()
        gate = self.gate if cuda and method == "graph" else None
        # What runs right after the calls, taken now (the names were put back before this
        # request came): a module name the calls rebound is not looked up there.
        record, gate_open, clock, sync = (_event_record, vars(LaunchGate)["open"],
                                          _perf_counter, _cuda_synchronize)
        frame_off, framed, keys_now, keys = _set_eval_frame, None, _dispatch_keys, _DISPATCH_KEYS
        gc_off, restore_types = _gc_disable, _restore_type_tables
        handlers_changed, handlers = _handlers_changed, _SIGNAL_BASELINE
        if cuda:
            # both events on the stream current now, whatever a call leaves current
            stream, stream_data = _current_stream()
            start, end = _EventBase(enable_timing=True), _EventBase(enable_timing=True)
            if gate is not None:
                _cuda_sleep(GATE_LEAD_CYCLES)  # the CUPTI window's start, then the gate
                gate.close(_stream_pointer(stream))
            else:
                _cuda_sleep(LEAD_CYCLES)  # the GPU waits here while the calls are launched
            _event_record(start, stream)
        t0 = _perf_counter()
        replaced: list[object] = []  # held until the reply has left (in _KEPT)
        try:
            results = [fn() for fn in calls]
            t1 = clock()  # the CPU's clock stops here: no step of the harness's in it
            if cuda:
                record(end, stream)
        finally:
            # First no frame-evaluation callback (a C call, before any Python function:
            # one left set would run at the start of each). Then every name the harness
            # calls from here on, put back as it was before any candidate code
            # (``_saved``, bound in these defaults when the serve loop started): one the
            # calls rebound, and would put back themselves in time, would otherwise run
            # their code in the harness's own steps after them. Then the gate opens: the
            # launch has returned, and the events start now (the device waits behind the
            # gate meanwhile, so the put-back is not in them).
            # The collector off as well, before the harness allocates anything: a
            # collection set off by its steps would run the candidate's finalizers there.
            gc_off()
            framed = frame_off(None) if frame_off is not None else None
            # and every built-in type's methods, before the harness calls one by name
            retyped = restore_types()
            rekeyed = keys_now() != keys  # before any torch operation of the harness's
            # a handler the calls set: refused before any step could run it (one left
            # pending runs at the first handler put back, before that one is back)
            resignaled = handlers_changed(handlers)
            changed = _put(_saved, replaced) if _put is not None else []
            if framed is not None:
                changed = [*changed, _EVAL_FRAME]
            if rekeyed:
                changed = [*changed, _KEYS_CHANGED]
            if retyped:
                changed = [*changed, _TYPES_CHANGED]
            if resignaled:
                changed = [*changed, _HANDLERS_CHANGED]
            if gate is not None:
                gate_open(gate)
        if type(self) is not Worker:  # the audit hook refuses it: only a write to memory
            raise CandidateError("harness integrity: candidate code replaced the "
                                 "worker's class")
        state = vars(self)
        if type(state) is not dict:  # a dict's subclass would run its code at each read
            raise CandidateError("harness integrity: candidate code replaced Worker.__dict__")
        changed += [f"Worker.{name}" if type(name) is str  # (no other object formatted)
                    else "Worker.<a name that is not a str>" for name in [
                        n for n in list(state) if type(n) is not str or n in _WORKER_NAMES]]
        if changed:
            raise CandidateError("harness integrity: candidate code replaced "
                                 + ", ".join(str(name) for name in changed[:20]))
        # The list the calls' outputs go to, as it was before them (read once the names
        # are told to be plain): one the calls put there would be freed by the
        # assignment below, finalizers and all.
        if state.get("produced") is not previous:
            raise CandidateError("harness integrity: candidate code replaced Worker.produced")
        if cuda:
            sync()
        _restore_signals(replaced)  # none of the candidate's handlers from here on
        _set_switch_interval(_SWITCH_INTERVAL)
        op = _kernels_replaced(_OPS_AFTER_CALLS)
        if op is not None:
            raise CandidateError(f"harness integrity: candidate code replaced {op}")
        if _function_modes() or _dispatch_modes():  # would run inside the harness's copies
            raise CandidateError("a call left a torch function or dispatch mode active")
        if cuda and _current_stream()[1] != stream_data:
            raise CandidateError("a call left another CUDA stream current")
        if marker is not None:
            _fill(marker, 2)  # after the synchronise: no activity of the calls follows
        elapsed = _event_elapsed(start, end) if cuda else (t1 - t0) * 1e3
        if type(elapsed) is not float:  # an object of the candidate's would run code
            raise CandidateError("harness integrity: the calls' device time is not a float")
        if method == "graph" and stand_in is None:
            self.produced = list(zip(graph[1], graph[2]))
        elif method == "graph":
            self.produced = list(zip(ids, map(tuple, self.stand_in_calls)))
        else:
            self.produced = list(zip(ids, results))
        t_calls = _perf_counter()
        kept = self.produced  # what the calls returned, alive until the reply has left
        reply = _collect(self, {"n_outputs": n_outputs})  # bound: no lookup by name
        reply[_KEPT] = (results, kept, calls, graph_outputs if method == "graph" else None,
                        replaced, reply[_KEPT], previous, ids)
        reply["event_ms"] = elapsed
        reply["gated"] = gate is not None
        # Where this request's time went, as this process saw it (a diagnostic only).
        reply["phases_ms"] = {"inputs": (t_inputs - t_start) * 1e3,
                              "calls": (t_calls - t_inputs) * 1e3,
                              "outputs": (_perf_counter() - t_calls) * 1e3}
        return reply

    def arm(self, request: dict) -> dict:
        """Start CUPTI's activity trace for the next trial (outside the clock). The reply
        says whether it runs: where it cannot, the trial is timed by its events alone."""
        if self.device.type != "cuda" or self.profiler is not None:
            return {"armed": self.profiler is not None}
        try:
            profiler = torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CUDA])
            profiler.start()
        except Exception:  # noqa: BLE001 - no CUPTI here
            return {"armed": False}
        self.profiler = profiler
        if self.marker is None:
            self.marker = torch.zeros(1, dtype=torch.uint8, device=self.device)
        return {"armed": True}

    def disarm(self, request: dict) -> dict:
        """Stop the trace (after the clock) and, when asked (``read``), summarise the
        armed trial's device activity from its lead sleep to its end marker."""
        profiler, self.profiler = self.profiler, None
        if profiler is None:
            return {}
        try:
            profiler.stop()
            return {"cupti": _activity_summary(profiler)} if request.get("read") else {}
        except Exception as exc:  # noqa: BLE001 - the trace could not be read
            return {"cupti": {"error": _one_line(exc)}}

    def _flush_l2(self, size: int) -> None:
        """Read ``size`` bytes (the audit's :func:`l2_flush_bytes`: twice the L2 cache) of
        a buffer allocated here, now (inside the request, before the calls and outside
        their device time): no input is then L2-resident, and the lines the unmask dirtied
        are written back here, not during the calls (a write would leave them dirty, to be
        written back inside the calls). The buffer is allocated for each flush, so there
        is no kept buffer a candidate could swap for a smaller one; the size comes with
        the request, so there is no lookup of the cache's size it could shrink."""
        if type(size) is not int:
            raise CandidateError("harness integrity: the request's flush size was replaced")
        _sum(_empty(size, dtype=torch.uint8, device=self.device))

    def stage(self, request: dict) -> dict:
        """(Stand-in workers only) the outputs to return instead of calling a candidate."""
        self.stand_in = [t.to(self.device) for t in request["outputs"]]
        self.stand_in_calls = []  # one copy per call, made with the slots
        if self.device.type == "cuda" and self.stand_in_graph is None:
            tick = torch.zeros(1, device=self.device)
            tick.add_(1)  # the kernel's first launch, outside the capture
            _synchronize(self.device)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                tick.add_(1)
            self.stand_in_graph = (graph, tick)
        self._sync()
        return {}

    def changed(self, request: dict) -> dict:
        """Which private (device) copies of inputs differ from what the audit staged
        (unmasked, for an arena); asked after a trial, outside its clock. The audit
        byte-checks the inputs it maps itself (the workload's own, on CPU)."""
        changed, verdict = [], {}  # a tensor shared by several sets is compared once
        expected: dict[str, torch.Tensor] = {}
        # An arena whose whole private copy is as expected leaves every view of it
        # unchanged: one comparison instead of one per input (and per device sync).
        intact: dict[str, bool] = {}
        for set_id in request["ids"]:
            arena_id = self.arena_of.get(set_id)
            parts = None if arena_id is None else _arena_parts(self.arenas.get(arena_id))
            if parts is not None and arena_id not in expected:
                expected[arena_id] = _Arena.unmasked_source(self.arenas[arena_id])
                intact[arena_id] = _same_bytes(parts["private"], expected[arena_id])
            for index, (mine, source) in enumerate(zip(*self._inputs_of(set_id)[:2])):
                if type(mine) is not _TENSOR:  # the registered tensors are all plain
                    continue
                if mine is source:
                    if _device_of(mine).type != "cpu":  # a device copy is never its source
                        raise CandidateError("harness integrity: an input's device copy "
                                             "was made its own source")
                    continue
                key = _tensor_data_ptr(mine)
                if key not in verdict and intact.get(arena_id) and (
                        _untyped_storage(mine).data_ptr()
                        == _untyped_storage(parts["private"]).data_ptr()):
                    verdict[key] = True
                if key not in verdict:
                    if parts is not None and (_untyped_storage(source).data_ptr()
                                              == parts["storage"]):
                        verdict[key] = _same_bytes(
                            mine, _Arena.view_of(self.arenas[arena_id], source,
                                                 expected[arena_id]))
                    else:
                        verdict[key] = _same_bytes(_to(mine, "cpu"), source)
                if not verdict[key]:
                    changed.append([set_id, index])
        return {"changed": changed}

    # ----------------------------------------------------------------- serving
    def warm(self, request: dict) -> dict:
        """Before any candidate is known (a spare worker, see
        :meth:`hf_eval.isolation.workers.Isolation.spare`): take the device, run the timed
        path once, and on CUDA start and stop CUPTI once (its first start takes seconds);
        no candidate code runs. ``load`` then only imports the candidate."""
        self._take_device(request["device"])
        if self.device.type == "cuda":
            self.arm({})
            self.disarm({})
            _start_libraries(self.device)
        return {}

    def _take_device(self, name: str) -> None:
        """Use device ``name`` from now on and run the timed path once; a second call for
        the same device does nothing, for another one fails."""
        device = torch.device(name)
        if device.type == "cuda":
            device = torch.device("cuda", device.index or 0)
        if self.device_taken:
            if device != self.device:
                raise RuntimeError(f"the worker serves {self.device}, not {device}")
            return
        if device.type == "cuda":
            torch.cuda.set_device(device)
            try:
                self.gate = LaunchGate()
            except (OSError, AttributeError, RuntimeError):  # no stream memory operations
                self.gate = None
        self.device, self.device_taken = device, True
        self._warm_timed_path()

    def load(self, request: dict) -> dict:
        self._take_device(request["device"])
        if request.get("stand_in"):
            _quiet_collector()
            return {"walls": self.walls, "prepare": False}
        solution = Solution.model_validate_json(request["solution"])
        self.entry = load_entry(solution, os.environ.get("TMPDIR"))
        _quiet_collector()
        return {"walls": self.walls, "prepare": self.entry.prepare is not None}

    def _warm_timed_path(self) -> None:
        """Run once, before any candidate code and in the stand-in alike, what a timed
        trial runs (the unmask and its imports, the lead, the events, the marker, the
        flush's allocation): no first use of the harness's own path lands inside a
        candidate's clocked request and not in the stand-in's."""
        probe = torch.zeros(64, dtype=torch.uint8, device=self.device)
        unmask(probe, 1, torch.empty_like(probe))
        if self.device.type == "cuda":
            stream, _ = _current_stream()
            start, end = _EventBase(enable_timing=True), _EventBase(enable_timing=True)
            _cuda_sleep(GATE_LEAD_CYCLES)
            if self.gate is not None:
                self.gate.close(_stream_pointer(stream))
            _event_record(start, stream)
            _fill(probe, 1)
            _event_record(end, stream)
            if self.gate is not None:
                self.gate.open()
            _cuda_synchronize()
            _event_elapsed(start, end)
            self._flush_l2(l2_flush_bytes(self.device))
            self._sync()

    def _sync(self) -> None:
        if self.device.type == "cuda":
            _cuda_synchronize()  # the whole device (this worker's one): every stream

    def serve(self) -> None:
        """Answer requests until the channel closes: ``{"ok": True, ...}`` with what the
        request produced, or ``{"ok": False, "error": ..., "traceback": ...}``."""
        # Bound now, before any candidate code runs: the check and what it compares with
        # are this frame's locals (a candidate that replaces the module's check is caught
        # by the check it did not replace).
        # No audit hook can be added after this one (an audit hook cannot be removed, and
        # one runs inside every check that raises an audit event).
        global _SIGNAL_BASELINE, _DISPATCH_BASELINE
        _DISPATCH_BASELINE = tuple(
            (op, _dispatch_dump(op), _overload(op), type(_overload(op)),
             _python_kernels(_overload(op)))
            for op in _OPS_BEFORE_CALLS + _OPS_AFTER_CALLS)
        _SIGNAL_BASELINE = tuple(
            (number, handler) for number in signal.valid_signals()
            if number not in (signal.SIGKILL, signal.SIGSTOP)
            and (handler := _getsignal(number)) is not None)
        saved, put_back = _path_names(), _put_back
        trial = vars(Worker)["trial"]  # its defaults: fixed once the audit hook is added
        trial.__defaults__ = (trial.__defaults__[0], saved, put_back)
        # and what the loop itself calls once a message is in hand: a module name rebound
        # and put back by the candidate in time would run its code with the reply built
        gc_off, restore_signals, identity_of = _gc_disable, _restore_signals, _identity
        set_switch_interval, switch_interval = _set_switch_interval, _SWITCH_INTERVAL
        # and the builtins it calls once candidate code may have run: a key of the
        # candidate's planted in ``builtins`` runs its code at any lookup that meets it,
        # so nothing is looked up between a handler and the put-back
        as_tuple, exception_type, first, attributes = tuple, Exception, next, vars
        odd_keys, containers = _odd_keys, _containers_reshaped
        one_line, format_traceback, out_of_memory = _one_line, _format_traceback, _OUT_OF_MEMORY
        kept_key, renamed_text = _KEPT, _RENAMED
        frame_off, eval_frame_text = _set_eval_frame, _EVAL_FRAME
        warn_always, set_warn_always, warn_always_text = (
            _warn_always, _set_warn_always, _WARN_ALWAYS)
        restore_types, types_text = _restore_type_tables, _TYPES_CHANGED
        drop_modes, modes_text = _drop_modes, _MODES_LEFT
        renamed: tuple[str, ...] = ()  # a tuple: code that reaches it cannot empty it
        baseline = _snapshot()
        veto = _refuse_audit_hooks
        sys.addaudithook(types.FunctionType(
            veto.__code__, {}, veto.__name__,
            veto.__defaults__[:-3] + (_harness_functions(baseline),
                                      frozenset(map(id, list(sys.modules.values()))),
                                      _harness_classes(saved))))
        check = _integrity_problems
        check_code = check.__code__
        state = _state_problems
        state_code = state.__code__
        clear = _cleared_hooks
        clear_code = clear.__code__
        # The worker's end of the channel: two functions of its module, which read no
        # state of the channel object (an attribute set there later, or a method shadowed
        # on it, is never looked up); and its socket, which they are given (never read
        # again from the channel: a proxy set there later would read every request
        # first; it is reported too).
        recv, send = _receive_request, _send_reply
        channel_socket = self.channel.sock
        # A tuple of bound methods, taken from the class now: nothing the candidate can
        # reach rebinds a handler (a dict could be found through gc and changed).
        handlers = (("warm", self.warm), ("load", self.load), ("register", self.register),
                    ("reload", self.reload), ("slots", self.set_slots),
                    ("refresh", self.refresh), ("forget", self.forget),
                    ("prepare", self.prepare), ("capture", self.capture),
                    ("trial", self.trial), ("stage", self.stage), ("changed", self.changed),
                    ("arm", self.arm), ("disarm", self.disarm),
                    ("checked", lambda request: {}),
                    ("null", lambda request: (self._sync(), {"walls": self.walls})[1]))
        # The record of the lent slots, as the slots request left it: a candidate that
        # rebuilds the worker's record to match other slot lists is caught by identity.
        lent = None
        # The channel's descriptor and what it is: another file put at its number (a
        # socket pair's end whose other end relays every message) is tampering.
        descriptor = _sock_fileno(channel_socket)
        identity = identity_of(descriptor)
        kept: list[object] = []
        loaded = False
        while True:
            # The last message's objects go now, between messages: a finalizer of the
            # candidate's planted in them runs with no message in hand (freed by the next
            # assignment, it would run after the next request was read, and rewrite it).
            # (every local a handler's message left, so that none outlives ``kept`` and is
            # freed, finalizer and all, by an assignment with the next reply in hand)
            request = reply = result = handler = now = reshaped = hooked = tampered = None
            framed = late = None
            kept.clear()
            # Then the signals' handlers: putting one back runs every handler whose signal
            # is pending, the candidate's among them. Both this and the finalizers just
            # run are the candidate's code, so they come before the tables and the names
            # are put back, not after (what is replaced from here on is held in ``kept``).
            restore_signals(kept)
            gc_off()
            # and any torch mode a finalizer or a handler pushed (it would run its code in
            # the next handler's torch operations: the reveal's, the checks')
            remoded = drop_modes(kept)
            # the built-in types' methods next: the steps below call some by name
            retyped = restore_types()
            # a finalizer just run may have set a frame-evaluation callback: none runs in
            # the put-back and the receive below, and it is reported with the next reply
            framed = frame_off(None) if frame_off is not None else None
            renamed = tuple(put_back(saved, kept))  # reported with this message's reply
            if retyped:
                renamed += (types_text,)
            if remoded:
                renamed += (modes_text,)
            set_switch_interval(switch_interval)
            # and the collector off again (a finalizer may have turned it on): a collection
            # set off by the harness's own allocations would run the candidate's
            # finalizers while a message is in hand
            gc_off()
            if warn_always():  # off before the receive maps the request's buffers
                set_warn_always(False)
                renamed += (warn_always_text,)
            try:
                request = recv(channel_socket)
            except ChannelClosed:
                return
            # read once, before the handler: a candidate's code can reach the request
            op, nonce, as_stand_in = request["op"], request["nonce"], request.get("stand_in")
            if op == "exit":
                return
            if identity_of(descriptor) != identity:
                put_back(saved, kept)
                send(channel_socket, {"ok": False, "nonce": nonce, "error": "harness "
                     "integrity: candidate code replaced the channel's descriptor"})
                continue
            # Every handler reads the worker's containers by key: none with a key that
            # is not a str (whose ``__eq__`` would run at the lookup), none of another type.
            reshaped = containers(attributes(self))
            if not reshaped and loaded and attributes(self).get("stand_in") is not None:
                reshaped = ["Worker.stand_in"]  # a worker that loaded a candidate is none
            if reshaped:
                put_back(saved, kept)
                send(channel_socket, {"ok": False, "nonce": nonce,
                                      "error": renamed_text + reshaped[0]})
                continue
            try:
                handler = first(fn for name, fn in handlers if name == op)
                try:
                    result = handler(request)
                finally:  # a C call, before any Python function runs (see ``trial``)
                    late = frame_off(None) if frame_off is not None else None
                    if late is not None:
                        framed = late
                # Whatever the handler made or left, held until the reply has left (a
                # trial's calls, results and closures too): freed earlier, an object of
                # the candidate's could run its finalizer (its code) between the
                # outputs' checks and the send, and rewrite the reply.
                kept.append(result)
                reply = {"ok": True, **result}
                kept.append(reply.pop(kept_key, None))
                if op == "slots":
                    now = attributes(self)
                    lent = (None if type(now) is not dict or odd_keys(now)
                            else now.get("lent"))
                if op == "load" and not as_stand_in:
                    loaded = True  # a local: from now on this worker is no stand-in
            except out_of_memory as exc:
                reply = {"ok": False, "error": f"out of memory: {one_line(exc)}"}
                kept.append(exc)  # with its frames: nothing of them is freed before the send
            except exception_type as exc:  # the candidate's failure, in its words
                reply = {"ok": False, "error": one_line(exc),
                         "traceback": format_traceback()}
                kept.append(exc)
            # and again after the error's text, which the candidate's ``__str__`` wrote
            late = frame_off(None) if frame_off is not None else None
            if late is not None:
                framed = late
            gc_off()
            if restore_types():  # before any method is called by name
                renamed += (types_text,)
            # First of all, with the reply in hand: every name put back, before any lookup.
            renamed += as_tuple(put_back(saved, kept))
            if framed is not None:
                renamed += (eval_frame_text,)
            if op == "trial":
                # A trial's reply leaves at once: the audit's clock runs until it comes,
                # and a check the candidate can switch off must not sit inside it (the
                # stand-in's floor would subtract a cost such a candidate never paid).
                # The audit follows every trial with ``checked``, off its clock, whose
                # reply carries what the checks below find.
                if renamed:
                    kept.append(reply)
                    reply = {"ok": False, "error": renamed_text + ", ".join(renamed[:20])}
                reply["nonce"] = nonce
                send(channel_socket, reply)
                continue
            # First no hook (none runs inside the checks), then the checks.
            # (the findings in tuples: a list could be emptied in place by code that runs
            # inside a later check)
            hooked = (clear() if clear.__code__ is clear_code else True)
            tampered = ("sys.setprofile or sys.settrace (a hook left set)",) if hooked else ()
            tampered += (as_tuple(check(baseline)) if check.__code__ is check_code
                         else ("hf_eval.isolation.server._integrity_problems.__code__",))
            tampered += (as_tuple(state(self, lent, channel_socket))
                         if state.__code__ is state_code
                         else ("hf_eval.isolation.server._state_problems.__code__",))
            if tampered:
                kept.append(reply)  # not freed here: see above
                reply = {"ok": False, "error": "harness integrity: candidate code replaced "
                                               + ", ".join(tampered[:20])}
            renamed += as_tuple(put_back(saved, kept))
            if renamed and not tampered:
                kept.append(reply)
                reply = {"ok": False, "error": renamed_text + ", ".join(renamed[:20])}
            reply["nonce"] = nonce
            send(channel_socket, reply)



#: Every attribute name of the worker's classes (their methods among them), fixed now:
#: an instance attribute of one of these names shadows a method (checked in every request).
_WORKER_NAMES = frozenset(dir(Worker))
_CHANNEL_NAMES = frozenset(dir(Channel))

#: Head dimensions whose attention kernels a spare worker runs once (those of the
#: dataset's attention definitions).
WARM_HEAD_DIMS = (64, 128)


def _start_libraries(device: torch.device) -> None:
    """Start, once and on tiny tensors, the CUDA libraries a candidate's first call would
    otherwise start inside its own first call: cuBLAS and cuBLASLt (a matrix product in
    each floating dtype) and the attention kernels of
    ``scaled_dot_product_attention`` at :data:`WARM_HEAD_DIMS`. Only a spare worker does
    this, before any candidate is known; no call of it is timed, so it changes how soon a
    request is answered and no figure. A library that cannot start here starts in the
    candidate's first call, as it would have."""
    try:
        for dtype in (torch.float16, torch.bfloat16, torch.float32):
            a = torch.ones(16, 16, dtype=dtype, device=device)
            torch.matmul(a, a)
        for head_dim in WARM_HEAD_DIMS:  # a decode-like and a longer query, [B, N, H, D]
            k = torch.ones(1, 16, 2, head_dim, dtype=torch.bfloat16, device=device)
            for q in (k[:, :1], k):
                torch.nn.functional.scaled_dot_product_attention(
                    q.transpose(1, 2), k.transpose(1, 2), k.transpose(1, 2))
        _synchronize(device)
    except Exception:  # noqa: BLE001 - the candidate's first call starts it instead
        pass
    torch.cuda.empty_cache()


def _quiet_collector() -> None:
    """No garbage-collector pause inside a clocked request: the interpreter's objects so
    far (torch, the harness, the candidate's imports) are frozen out of collection, and
    automatic collection is turned off; ``forget``, between trials, collects instead.
    (A full collection of a process with torch imported takes 50-150 ms: on the H200 such
    pauses landed inside trials and were counted against candidates and stand-in alike.)"""
    _gc_collect()
    gc.freeze()
    _gc_disable()


def _activity_summary(profiler) -> dict:
    """CUPTI's view of the armed trial: every device activity (kernels, copies, sets, on
    every stream) that overlaps the window from the earliest end of a lead sleep to the
    start of the last marker (other than the lead and marker that bound it); their
    count, their summed durations, and their span, clipped to the window, from the first
    start to the last end. (A kernel of either name of the candidate's only widens the
    window: a lead sleep of its own that starts before the harness's and ends after its
    calls does not move the window's start past them.)"""
    events = sorted((e for e in profiler.events()
                     if e.device_type == torch.autograd.DeviceType.CUDA),
                    key=lambda e: e.time_range.start)
    leads = [i for i, e in enumerate(events) if LEAD in e.name]
    markers = [i for i, e in enumerate(events) if MARKER in e.name]
    if not leads or not markers:
        raise RuntimeError("the trial's lead or marker is missing from the trace")
    first, last = min(leads, key=lambda i: events[i].time_range.end), markers[-1]
    low, high = events[first].time_range.end, events[last].time_range.start
    inside = [e for i, e in enumerate(events) if i not in (first, last)
              and e.time_range.end > low and e.time_range.start < high]
    if not inside:
        return {"kernels": 0, "kernel_ms": 0.0, "span_ms": 0.0}
    return {"kernels": len(inside),
            "kernel_ms": sum(e.time_range.elapsed_us() for e in inside) / 1e3,
            "span_ms": (min(high, max(e.time_range.end for e in inside))
                        - max(low, min(e.time_range.start for e in inside))) / 1e3}


#: Characters of candidate text a reply carries (the audit keeps no more).
MAX_TEXT = 4000


_type_name = vars(type)["__name__"].__get__
_is_identifier, _is_ascii, _is_upper = str.isidentifier, str.isascii, str.isupper


def _one_line(exc: BaseException) -> str:
    """The exception's first line, cut to MAX_TEXT (an exception whose ``str`` raises is
    named by its type). A type's name that is no ASCII identifier, or is in capitals as
    the audit's statuses are, is the candidate's text, not a name ("DATA_ERROR (the
    workload's data, ...)" would read as the audit's finding), and is quoted."""
    try:
        name = str(_type_name(type(exc)))
        plain = _is_ascii(name) and _is_identifier(name) and not _is_upper(name)
        name = name if plain else repr(name)
    except Exception:  # noqa: BLE001 - a name that cannot be read
        name = ""
    # the candidate's own object: its ``__str__`` may raise anything, KeyboardInterrupt or
    # SystemExit too, which ends the text, not the worker
    try:
        text = f"{name}: {exc}".strip()
    except BaseException:  # noqa: BLE001
        text = name
    lines = str.splitlines(str(text))
    return (lines[0] if lines else "an exception without a readable name")[:MAX_TEXT]


def _format_traceback() -> str:
    """The candidate's last frames, cut to MAX_TEXT. Their source lines come from the
    candidate's modules' loaders, its code: whatever that raises ends the text, not the
    worker."""
    try:
        text = traceback.format_exc(limit=-5)
    except BaseException:  # noqa: BLE001 - a frame whose text cannot be made
        return ""
    # only a plain str goes into a reply (an object of the candidate's, from a replaced
    # ``format_exc``, would run its code in the reply's encoding, after the put-back)
    return text[-MAX_TEXT:] if type(text) is str else ""
