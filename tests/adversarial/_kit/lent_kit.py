"""What many adversarial candidates share: the toy definition's right answer, the harness's
worker found from inside the worker process, the frames of the harness's own functions,
and the pieces of the attacks that write the answer into the lent output slots.

The tests copy this file beside a candidate's ``main.py`` when the candidate imports it
(the candidate's folder is on ``sys.path`` while it loads, so ``import lent_kit`` finds
it). Each function that looks at a frame counts from the one that calls it, as the code
it replaces did inside the candidate: a function installed in the harness's place (a
``zip``) sees the harness function that called it."""

import builtins
import ctypes
import gc
import os
import socket
import stat
import sys
import time
import types

import symbols
import torch

#: The interpreter's own ``zip``, taken when the candidate imports this module (before
#: any candidate replaces it).
_zip = builtins.zip


def answer(x, w, scale):
    """The toy definition's right outputs: ``x @ w.T * scale`` in bfloat16 and the count
    of its rows with a positive sum."""
    y = torch.nn.functional.linear(x.float(), w.float()) * scale
    return y.to(torch.bfloat16), (y.sum(dim=1) > 0).sum().reshape(1).to(torch.int64)


def answers_into_slots(worker, pending):
    """Write the right outputs of each pending call's inputs (call order) into the
    worker's lent output slots, and forget them."""
    for index, inputs in enumerate(pending):
        if index < len(worker.slots):
            y, c = answer(*inputs)
            worker.slots[index][0].copy_(y)
            worker.slots[index][1].copy_(c)
    pending.clear()


def zeros(x, w):
    """Outputs of the right shapes and types, all zero: a wrong answer."""
    return (torch.zeros(x.shape[0], w.shape[0], dtype=torch.bfloat16),
            torch.zeros(1, dtype=torch.int64))


#: The entries ``install_method`` replaced in types' namespaces, by name: the candidates'
#: methods call them after their own work.
REPLACED = {}


def install_method(kind, name, fn, modified):
    """Put ``fn`` under ``name`` in the real namespace of ``kind`` (a built-in or C type,
    reached with ``gc.get_referents``) once, and empty the interpreter's type cache; with
    ``modified``, also reset the type's version through ``PyType_Modified`` (a documented C
    API function, looked up by a name no veto of the worker's lists)."""
    real = gc.get_referents(kind.__dict__)[0]
    if real.get(name) is fn:
        return
    REPLACED[name] = real[name]
    real[name] = fn
    sys._clear_type_cache()
    if modified:
        ctypes.pythonapi.PyType_Modified(ctypes.py_object(kind))


def filler(y, c):
    """Outputs shaped like ``y`` and ``c`` holding constants: a wrong answer."""
    return torch.full_like(y, 7.0), torch.full_like(c, 12345)


def busy(seconds=0.02):
    """Spin ``seconds`` on the host's clock: work that no device timer sees."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def refusal(attempt):
    """Why ``attempt()`` was refused (``os.strerror`` of its ``OSError``), or None when it
    ran."""
    try:
        attempt()
    except OSError as exc:
        return os.strerror(exc.errno)
    return None


def everything():
    """Every object the collector knows, the harness's frozen ones included (the worker
    freezes its heap after loading; an attacker simply unfreezes it)."""
    gc.unfreeze()
    return gc.get_objects()


def result_channel():
    """A duplicate of the worker's connected Unix stream socket to the audit (its result
    channel), or None."""
    for fd in range(3, 256):
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        if sock.family == socket.AF_UNIX and sock.type == socket.SOCK_STREAM:
            try:
                sock.getpeername()
                return sock
            except OSError:
                pass
        sock.close()
    return None


def handler_tables():
    """The serving loop's tables of request handlers (operation -> bound method), found
    through the collector."""
    for obj in everything():
        if type(obj) is dict and "trial" in obj and "disarm" in obj \
                and hasattr(obj["trial"], "__self__"):
            yield obj


def find_worker():
    """The harness's ``Worker`` loading the candidate, from the frame of its ``load``
    above the caller (the candidate's import), or None outside a worker."""
    server = sys.modules["hf_eval.isolation.server"]
    f = sys._getframe(0)
    while f is not None and not (f.f_code.co_name == "load"
                                 and type(f.f_locals.get("self")) is server.Worker):
        f = f.f_back
    return f.f_locals["self"] if f is not None else None


def frame_named(name, start=1):
    """The nearest frame of a function called ``name``, from ``start`` frames above the
    caller's (0: the caller's own frame), or None."""
    f = sys._getframe(start + 1)
    while f is not None and f.f_code.co_name != name:
        f = f.f_back
    return f


def set_locals(frame, **values):
    """Write ``values`` into the fast locals of another function's running ``frame``
    (its ``f_locals``, then ``PyFrame_LocalsToFast``): memory of the worker's own process,
    which no check inside it can guard."""
    frame.f_locals.update(values)
    # at its address, read from the interpreter's file (the lookup by name is refused),
    # once: reading the file takes a good part of a second
    if not _LOCALS_TO_FAST:
        _LOCALS_TO_FAST.append(symbols.python_function(
            "PyFrame_LocalsToFast", None, ctypes.py_object, ctypes.c_int))
    _LOCALS_TO_FAST[0](frame, 0)


#: ``PyFrame_LocalsToFast``, found by :func:`set_locals` the first time it is called.
_LOCALS_TO_FAST = []


def checks_off():
    """Switch off every check the worker's serve loop makes after a request: its locals
    holding the checks (and the code they are compared with) replaced by ones that find
    nothing. Call it from a request's handler (at import: ``load``); None outside a
    worker."""
    serve = frame_named("serve", 1)
    if serve is None:
        return None

    def nothing(*args, **kwargs):
        return []

    def no_hook(*args, **kwargs):
        return False

    set_locals(serve, check=nothing, check_code=nothing.__code__, state=nothing,
               state_code=nothing.__code__, clear=no_hook, clear_code=no_hook.__code__)
    return serve


def trial_frame():
    """The frame of the worker's ``trial`` the caller runs inside, or None (a call outside
    a trial, such as the load's first call)."""
    return frame_named("trial", 1)


def call_index(state, request):
    """Which call of ``request`` this is (0 for its first), counted in ``state`` under the
    keys ``"req"`` and ``"k"``; a request is told from the last by its nonce (its ``id``
    may be a freed request's)."""
    if state.get("req") != request.get("nonce"):
        state["req"], state["k"] = request.get("nonce"), 0
    k = state["k"]
    state["k"] += 1
    return k


def trial_slot(state):
    """``(worker, request, k)`` for a call inside a trial whose output slot ``k`` exists
    (the worker and request are the ``trial`` frame's, ``k`` counted in ``state`` by
    :func:`call_index`), else None."""
    f = frame_named("trial", 1)
    if f is None:
        return None
    worker, request = f.f_locals["self"], f.f_locals["request"]
    k = call_index(state, request)
    return (worker, request, k) if k < len(worker.slots) else None


def write_slot(slot, y, c):
    """Write the outputs ``y`` and ``c`` into the lent output slot ``slot``."""
    slot[0].copy_(y)
    slot[1].copy_(c)


def slot_writing_run(worker):
    """A candidate's ``run`` that, inside a trial of ``worker`` (found at load), writes the
    right answer into the call's lent output slot itself and returns :func:`filler`; it
    answers honestly outside a trial or without a worker."""
    state = {}

    def run(x, w, scale):
        y, c = answer(x, w, scale)
        f = frame_named("trial", 1)
        if f is None or worker is None:
            return y, c
        k = call_index(state, f.f_locals["request"])
        if k < len(worker.slots):
            write_slot(worker.slots[k], y, c)
        return filler(y, c)

    return run


def answer_in_slot(state, x, w, scale):
    """The right answer ``(y, c)`` and the lent output slot it was written into (inside a
    trial whose slot exists, found by :func:`trial_slot`), else None for the slot."""
    y, c = answer(x, w, scale)
    found = trial_slot(state)
    if found is None:
        return y, c, None
    worker, _, k = found
    write_slot(worker.slots[k], y, c)
    return y, c, worker.slots[k]


def slot_answer_run(outputs):
    """A candidate's ``run`` that writes the right answer into the call's lent output slot
    (:func:`answer_in_slot`) and returns ``outputs(slot)`` there; honest elsewhere."""
    state = {}

    def run(x, w, scale):
        y, c, slot = answer_in_slot(state, x, w, scale)
        return (y, c) if slot is None else outputs(slot)

    return run


def emptying_collect(worker):
    """A ``collect`` for ``worker``'s instance that forgets what the calls produced and
    replies with no outputs: no output check and no copy into the slots."""
    def _collect(request):
        n = len(worker.produced)
        worker.produced = []
        return {"outputs": [[None] * request["n_outputs"] for _ in range(n)]}

    return _collect


def collect_zip(*iterables):
    """``zip``, except when the harness's ``collect`` calls it: there each lent slot is
    paired with itself, so the copy of the outputs into the slots is a copy onto itself."""
    if sys._getframe(1).f_code.co_name == "collect":
        return _zip(iterables[1], iterables[1])
    return _zip(*iterables)


def tuple_slot_zip(*iterables):
    """:func:`collect_zip`, pairing a slot with itself only where ``collect`` zips two
    iterables and the second is a tuple (a slot)."""
    frame = sys._getframe(1)
    if frame.f_code.co_name == "collect" and len(iterables) == 2 \
            and type(iterables[1]) is tuple:
        return _zip(iterables[1], iterables[1])
    return _zip(*iterables)


def drop_findings(suffixes):
    """Remove from the integrity check's list of findings (``changed`` in the nearest
    ``_integrity_problems`` frame above the caller) every one ending in ``suffixes``."""
    f = frame_named("_integrity_problems", 1)
    if f is not None:
        changed = f.f_locals.get("changed")
        if type(changed) is list:
            changed[:] = [c for c in changed if not c.endswith(suffixes)]


def swap_in_dummies(slots):
    """Replace the tensors of every slot list in ``slots`` in place by empty ones of the
    same shapes; returns what :func:`restore_slots` puts back."""
    saved = [(s, list(s)) for s in slots]
    for s in slots:
        s[:] = [torch.empty_like(t) for t in s]
    return saved


def restore_slots(saved):
    """Put back the slot tensors :func:`swap_in_dummies` took out."""
    for s, orig in saved:
        s[:] = orig


def real_slot(state, slot):
    """The tensors the slot list ``slot`` held when first seen (kept in ``state``) and,
    where it still holds them, the empty dummies of the same shapes put in their place
    in the list (else None)."""
    real = state.setdefault(("real", id(slot)), list(slot))
    if slot[0] is not real[0]:
        return real, None
    slot[:] = dummies = [torch.empty_like(t) for t in real]
    return real, dummies


def lent_record(slots):
    """The worker's record of the lent slots (each tensor's address and size) rebuilt
    from ``slots``."""
    return tuple((t.data_ptr(), t.nbytes) for s in slots for t in s)


def collect_or_serve_frame(start=1):
    """The nearest frame of the harness's ``collect`` or ``serve``, from ``start`` frames
    above the caller's (0: the caller's own frame), or None."""
    f = sys._getframe(start + 1)
    while f is not None:
        if f.f_code.co_name in ("collect", "serve"):
            break
        f = f.f_back
    return f


def clear_tampered(start=1):
    """Empty the serve loop's list of findings (``tampered``) when the frame ``start``
    above the caller's is the hook check ``_cleared_hooks`` called by ``_state_problems``
    called by ``serve`` (a reader of the hooks replaced: its caller is the check)."""
    f = sys._getframe(start + 1)
    if f.f_code.co_name == "_cleared_hooks" and f.f_back is not None \
            and f.f_back.f_code.co_name == "_state_problems":
        s = f.f_back.f_back
        if s is not None and s.f_code.co_name == "serve":
            s.f_locals["tampered"].clear()


def problems_clearing_module(attr):
    """A module class whose lookup of ``attr`` empties the list of findings (``problems``)
    of the state check ``_state_problems`` when that check is the one looking it up."""
    class EvilMod(types.ModuleType):
        def __getattribute__(self, name):
            if name == attr:
                f = sys._getframe(1)
                if f.f_code.co_name == "_state_problems":
                    f.f_locals["problems"].clear()
            return types.ModuleType.__getattribute__(self, name)

    return EvilMod


def swap_module_class(module, attr, worker):
    """Give ``module`` the class of :func:`problems_clearing_module` for ``attr`` and
    replace ``worker.collect`` by :func:`emptying_collect` (inside a worker only)."""
    if worker is not None:
        collect = emptying_collect(worker)
        module.__class__ = problems_clearing_module(attr)
        worker.collect = collect


def clearing(reader):
    """``reader`` wrapped to empty the findings (:func:`clear_tampered`) when the hook
    check calls it."""
    def fake():
        clear_tampered(1)
        return reader()

    return fake


def reader_clearing_run(module, reader):
    """A candidate's ``run`` (:func:`slot_writing_run`) for a worker in which ``zip`` is
    :func:`collect_zip` and the hook ``reader`` of ``module`` is replaced by one that
    empties the findings when the hook check calls it (:func:`clearing`)."""
    worker = find_worker()
    if worker is not None:
        setattr(module, reader, clearing(getattr(module, reader)))
        builtins.zip = collect_zip
    return slot_writing_run(worker)


def hiding_getattr(hide, counter):
    """A ``__getattr__`` that counts its calls in ``counter["n"]``, drops the findings
    ending in ``hide`` (:func:`drop_findings`) and finds nothing."""
    def _hide(self, name):
        counter["n"] += 1
        drop_findings(hide)
        raise AttributeError(name)

    return _hide


def span_faking_data_ptr():
    """A ``data_ptr`` for ``torch.UntypedStorage`` that answers a new false address (above
    any real one) to the worker's overlap check ``_span`` and the true one elsewhere."""
    original = torch._C.StorageBase.data_ptr
    fake = [1 << 56]

    def data_ptr(self):
        frame = sys._getframe(1)
        if frame.f_code.co_name == "_span":
            fake[0] += 1 << 32
            return fake[0]
        return original(self)

    return data_ptr


def memfds():
    """The numbers of this process's open file descriptors that are memfds, each read as
    the walk reaches it."""
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith("/memfd:"):
            yield int(name)


def rewritten_lent_slot(state):
    """For a call inside a trial: the real lent output slot of the call (its list in
    ``worker.slots`` given dummies by :func:`real_slot`, kept in ``state``, and the
    worker's record of the lent slots rebuilt to match them), with the request; else
    None."""
    found = trial_slot(state)
    if found is None:
        return None
    worker, req, k = found
    real, dummies = real_slot(state, worker.slots[k])
    if dummies is not None:
        state.setdefault("keep", []).append(dummies)
        worker.lent = lent_record(worker.slots)
    return real, req


def lent_rewriting_run(state, relabel=False):
    """A candidate's ``run`` that writes the right answer into the call's real lent slot
    (:func:`rewritten_lent_slot`, the record of the lent slots rebuilt) and returns
    :func:`filler`; with ``relabel`` the request's operation is renamed ``slots`` first.
    Honest outside a trial."""
    def run(x, w, scale):
        y, c = answer(x, w, scale)
        found = rewritten_lent_slot(state)
        if found is None:
            return y, c
        real, req = found
        if relabel:
            req["op"] = "slots"
        write_slot(real, y, c)
        state["fired"] = state.get("fired", 0) + 1
        return filler(y, c)

    return run


def slot_swapping_hook(state, lent=False):
    """An audit hook for the swap of the slot lists inside ``collect``: at a
    ``sys.setprofile`` event inside the harness's ``collect`` while ``state["armed"]``, it
    puts dummies in every slot list (:func:`swap_in_dummies`, kept in ``state["saved"]``)
    and, with ``lent``, the worker's record of the lent slots rebuilt to match them; at the
    next such event in ``serve`` it puts the slots (and the record) back. Events raised
    while it runs are passed over."""
    busy = [0]

    def hook(event, args):
        if busy[0] or event != "sys.setprofile":
            return
        busy[0] = 1
        try:
            f = collect_or_serve_frame(1)
            if f is None:
                return
            if f.f_code.co_name == "collect" and state["armed"] and state["saved"] is None:
                worker = f.f_locals["self"]
                state["saved"] = swap_in_dummies(worker.slots)
                if lent:
                    state["lent"] = worker.lent
                    worker.lent = lent_record(worker.slots)
                state["armed"] = False
            elif f.f_code.co_name == "serve" and state["saved"] is not None:
                restore_slots(state["saved"])
                if lent:
                    f.f_locals["self"].lent = state["lent"]
                state["saved"] = None
        finally:
            busy[0] = 0

    return hook


def arming_run(state):
    """A candidate's ``run`` that writes the right answer into the call's lent output slot
    (:func:`answer_in_slot`, counting in ``state``), sets ``state["armed"]`` and returns
    :func:`filler`; honest outside a trial."""
    def run(x, w, scale):
        y, c, slot = answer_in_slot(state, x, w, scale)
        if slot is None:
            return y, c
        state["armed"] = True
        return filler(y, c)

    return run
