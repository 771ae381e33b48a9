"""Adversarial candidates: each loophole of harness.md must be rejected with the exact
status, timing cheats must gain no speed-up, and the honest solution audited right after
each of them, on the same case, still passes. Candidates live in
tests/adversarial/<name>/main.py and run against the toy definition in contained
workers (docs/verdicts.md lists them by class)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import socket
import stat
import tempfile
import time
from pathlib import Path

import pytest
import torch

from hf_eval.data.errors import DataError
from hf_eval.data.schema import Solution, parse
from hf_eval.data.sources import solution_from_directory
from hf_eval.dataset import open_dataset
from hf_eval.isolation import workers
from hf_eval.isolation.walls import WORKER_UID_BASE
from hf_eval.judge.audit import Audit, AuditConfig
from hf_eval.judge.records import Status, reported_time
from hf_eval.judge.trials import (
    GUARD_MAX_MS,
    GUARD_MIN_MS,
    GUARD_REL,
    GUARD_RETRIES,
)
from tests.adversarial_kit import copy_candidate
from tests.conftest import solution_json

HERE = Path(__file__).parent / "adversarial"
DEFINITION = "toy_linear_n8_k16"
DENIED = r"Permission denied|Operation not permitted"

#: The channel's reply encoder rebound: put back before the send, and reported.
RENAMED = (r"^harness integrity: candidate code replaced (hf_eval\.isolation\.server\."
           r"_perf_counter, )?hf_eval\.isolation\.channel\._encode"
           r"(, hf_eval\.isolation\.server\._perf_counter)?$")
#: A profile, trace or monitoring function set in the worker: its audit hook refuses it.
PROFILE_REFUSED = (r"^RuntimeError: profile, trace and monitoring functions are not "
                   r"allowed in the worker$")
#: A refusal by the kernel (Landlock, DAC, seals) or a process the worker cannot see.
DENIED = r"Permission denied|Operation not permitted"
UNSEEN = DENIED + r"|No such file or directory|No such process"
#: What a candidate that sets its own ``collect`` on the worker instance gets.
SHADOWS_COLLECT = r"^(CandidateError: )?harness integrity: candidate code replaced Worker\.collect$"

#: A new class for an object of the harness's (the worker, say), refused by its audit hook.
CLASS_REFUSED = (r"^RuntimeError: the class of an object of the harness's may not change in "
                 r"the worker$")
#: The channel's unpickler's ``load`` replaced: put back before the next receive, reported.
UNPICKLER_LOAD = (r"^(CandidateError: )?harness integrity: candidate code replaced "
                  r"_Unpickler\.load$")

#: A key that is not a str planted in a namespace of the worker's message path.
ODD_KEY = (r"^(CandidateError: )?harness integrity: candidate code replaced {where}\.<a name "
           r"that is not a str>$")
#: A harness table a candidate tried to plant a key in, now a tuple.
NO_TABLE = r"^AttributeError: 'tuple' object has no attribute 'pop'$"

#: candidate -> (expected status, a regular expression the reason must match)
#: A new class for a module loaded before the candidate, refused by the worker's audit hook
#: at the candidate's import.
MODULE_CLASS_REFUSED = (r"^RuntimeError: the class of a module loaded before the candidate "
                        r"may not change in the worker$")

#: A thread racing the harness's steps (round 94's class, bounded by the guard): it
#: wins (PASSED) or loses at any of the judged calls (on a loaded host, any one).
RACE_LOST_OR_WON = (r"^((first call|second input set|(eager|graph) timing trial \d+): "
                    r"(y|positive_rows): |$)")
#: A C signal handler of the candidate's that ran Python inside the allocator.
RAW_HANDLER_CRASHED = r"worker process died: killed by SIGSEGV|no answer within \d+ s$"
#: An output that carries a tensor subclass's dispatch key.
NOT_PLAIN_KEY = (r"^CandidateError: output 0 carries a dispatch key no plain dense tensor "
               r"has \(a subclass's, a wrapper's, a nested, sparse, quantized or zero "
               r"tensor's, or a lazy negation's or conjugation's\)$")
#: The thread's dispatch keys found changed after a trial's calls.
KEYS_CHANGED = (r"^CandidateError: harness integrity: candidate code replaced the "
                r"thread's dispatch keys \(a key left included or excluded\)$")
#: A frame-evaluation callback found left set after a trial's calls.
EVAL_FRAME_LEFT = (r"^CandidateError: harness integrity: candidate code replaced "
                   r"torch's frame-evaluation callback \(a callback left set\)$")
#: The worker's audit hook refuses looking up the interpreter's pending-call queue.
PENDING_REFUSED = (r"^RuntimeError: Py_AddPendingCall may not be looked up through "
                   r"ctypes in the worker ")
#: A ctypes lookup of an interpreter function that puts native code into its steps.
NATIVE_HOOK_REFUSED = (r"^RuntimeError: {symbol} may not be looked up through ctypes in the "
                       r"worker \(it puts native code into the interpreter's own steps\)$")
#: A ctypes lookup of an interpreter function that writes frames, cells or functions.
STATE_WRITER_REFUSED = (r"^RuntimeError: PyFrame_LocalsToFast may not be looked up through "
                        r"ctypes in the worker \(it writes frames, cells or functions, the "
                        r"harness's among them\)$")
#: A built-in type's method table changed (reached through its read-only namespace), found
#: after a trial's calls (the trial's own refusal) or after a handler (the serve loop's).
TYPES_CHANGED = (r"^(CandidateError: )?harness integrity: candidate code replaced "
                 r"(json\.dumps, )?a built-in type's methods$")
#: The worker's device replaced by an object of the candidate's, found at a read.
DEVICE_REPLACED = (r"^(CandidateError: )?harness integrity: candidate code replaced "
                   r"Worker\.device$")
#: A call the worker's filter refuses (signal-driven I/O: fcntl F_SETOWN, F_SETSIG,
#: F_SETOWN_EX, O_ASYNC).
SIGNAL_IO_REFUSED = r"^PermissionError: \[Errno 1\] Operation not permitted$"
EXPECTED = {
    "honest": ("PASSED", r"^$"),
    "slow_honest": ("PASSED", r"^$"),
    "honest_tempfile": ("PASSED", r"^$"),
    # rewrites the worker's list of walls at import: the record keeps the real ones
    "forge_isolation_walls": ("PASSED", r"^$"),
    # the verdict is the audit's alone: the worker's words are a RUNTIME_ERROR at most
    "declare_passed": ("RUNTIME_ERROR", r"^CandidateError: PASSED$"),
    # (a handler set on the worker instance is never called, and is itself tampering;
    # the protocol's refusal of a status: tests/test_channel.py)
    "declare_passed_reply": ("RUNTIME_ERROR", SHADOWS_COLLECT),
    "declare_data_error_reply": ("RUNTIME_ERROR", SHADOWS_COLLECT),
    "declare_unknown_status_reply": ("RUNTIME_ERROR", SHADOWS_COLLECT),
    # outputs that are not fresh, plain, correct tensors
    "alias_input": ("RUNTIME_ERROR", r"killed by SIGSEGV .*inputs are mapped read-only"),
    "nan_output": ("INCORRECT_NUMERICAL", r"first call: y: .*non-finite"),
    "wrong_dtype": ("INCORRECT_DTYPE", r"dtype torch.float32 != torch.bfloat16"),
    "wrong_shape": ("INCORRECT_SHAPE", r"first call: y: shape"),
    "outputs_short_row": ("INCORRECT_SHAPE", r"^first call: y: shape \(0, 8\) != \(1, 8\)$"),
    # the worker's own state reshaped: slots that iterate empty, a send on the instance
    "slots_iter_bypass": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                           r"candidate code replaced Worker\.slots$"),
    "shadow_channel_send": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                             r"candidate code replaced Channel\.send$"),
    # ... meta tensors in the slots, the worker's class swapped for one whose output check
    # does nothing, a profile hook that swaps the slots between a check and its use
    "meta_slots": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: candidate "
                                    r"code replaced Worker\.slots$"),
    "class_swap_worker": ("RUNTIME_ERROR", CLASS_REFUSED),  # (the audit hook, since round 92)
    "profile_hook_toctou": ("RUNTIME_ERROR", PROFILE_REFUSED),
    # ... a collector callback that swaps the slots between the check and the copy
    "gc_callback_slot_swap": ("RUNTIME_ERROR", r"harness integrity: candidate code "
                                               r"replaced gc\.callbacks \(a collector "
                                               r"callback left set\)$"),
    # ... a profile function set through the C API (invisible to sys.getprofile), cleared
    # before the checks: the garbage it returned is what the audit judges
    "c_profile_hook_slot_swap": ("INCORRECT_NUMERICAL", r"^first call: "),
    # ... the slot lists refilled with other tensors (the worker keeps where the lent
    # memory lies), and an audit hook (vetoed: none can be added in the worker)
    "slot_list_swap_direct": ("RUNTIME_ERROR", r"harness integrity: candidate code "
                                               r"replaced Worker\.slots$"),
    "audit_hook_slot_swap": ("INCORRECT_NUMERICAL", r"^first call: "),
    # ... the worker's record of the lent slots rebuilt to match (the serve loop keeps
    # the one it saw lent), the veto emptied for a moment by a code swap (refused: the
    # garbage is judged), and a collector callback hidden behind rebound names
    "lent_rewrite": ("RUNTIME_ERROR", r"harness integrity: candidate code replaced "
                                      r"Worker\.lent$"),
    "veto_code_swap": ("INCORRECT_NUMERICAL", r"^first call: "),
    "gc_hidden_callback_toctou": ("COMPILE_ERROR", r"harness integrity: candidate code "
                                                   r"replaced gc\.disable, "),
    # another number of outputs is a shape failure, not a reply the audit distrusts
    "extra_output": ("INCORRECT_SHAPE", r"^first call: returned 3 outputs, the definition "
                                        r"has 2 \("),
    "lazy_output": ("RUNTIME_ERROR", r"^CandidateError: output 0 is Lazy, not a plain "),
    # the harness's own output slots returned as outputs: their copy would be skipped
    "slot_self_copy": ("RUNTIME_ERROR", r"^CandidateError: output 0 lies in the harness's "
                                        r"output slots \(outputs are the candidate's own "
                                        r"tensors\)$"),
    "deferred_thread": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    # the right answer written into the output slots after the reply comes too late
    "rewrite_outputs_late": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    # phase detection: every call is checked, so a detected "timed" call that cheats fails
    "phase_by_call_count": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    # (which checked call it lands on depends on how fast the machine runs the audit)
    "phase_by_spacing": ("INCORRECT_NUMERICAL", r"^(eager timing trial \d|second input set): y: "),
    "phase_by_arguments": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "phase_by_stack": ("PASSED", r"^$"),  # finds no difference, so stays honest (and slow)
    # the device time is a claim: forged, shifted or hidden, it gains at most the slack
    "forge_under_guard": ("PASSED", r"^$"),  # the handler table is immutable: stays honest
    "profile_shifts_t0": ("RUNTIME_ERROR", PROFILE_REFUSED),
    "frame_local_write": ("PASSED", r"^$"),
    # every worker-side check off and the claim ~0: the checks run off the clock
    "checks_off_claim_zero": ("PASSED", r"^$"),
    # a hook on torch's XOR, which the CPU reveal no longer calls (numpy draws and XORs
    # it): it never fires, and this stays the check that such a hook gains nothing
    "xor_hook_precompute": ("PASSED", r"^$"),
    # the CPU reveal's numpy lookups are guarded: a wrapper installed in run() is reported
    "numpy_empty_hook_precompute": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                                     r"replaced numpy\.empty$"),
    # the reveal's own call on the arena, and the reply's descriptor array: guarded
    "tensor_numpy_hook": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                                           r"Tensor\.numpy$"),
    "reply_array_late_write": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                                r"replaced array\.array$"),
    "reply_socket_constant_late_write": ("RUNTIME_ERROR", r"^harness integrity: candidate "
                                                         r"code replaced _socket\.SCM_RIGHTS$"),
    # a tensor of the candidate's class in an arena or an input set: refused where the
    # reveal and the checks read them, so none of its code runs there
    "arena_private_subclass": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                                r"candidate code replaced (Worker\.arenas|"
                                                r"a part of an arena)$"),
    "input_subclass_alias": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                              r"candidate code replaced an input of a call$"),
    # classes told apart by a metaclass's ``==``, words that are not the private copy's
    "metaclass_eq_words": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                            r"candidate code replaced (a part of an arena|"
                                            r"Worker\.arenas)$"),
    "metaclass_eq_spans": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate "
                                            r"code replaced an input of a call$"),
    "metaclass_eq_produced": ("RUNTIME_ERROR", r"^CandidateError: output 0 is Outs, not a "
                                               r"plain torch\.Tensor$"),
    # (its watcher thread races the request: the trial's arena check or, after the
    # request, the state check's finds it)
    "words_tiny_fused": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: candidate "
                                          r"code replaced (a part of an arena|Worker\.arenas)$"),
    # the worker's record of where its inputs lie, rewritten with the set: an output in its
    # own input, put back inside the clock; no gain ("What remains": checks in the worker)
    # (its thread may put x back too late: then the audit's own read of x catches it)
    "input_spans_edit_alias": (("PASSED", "INCORRECT_NUMERICAL"),
                               r"^(|eager timing trial \d: input\(s\) modified: x)$"),
    # the audit's OpenMP policy (PASSIVE) is not the worker's
    "worker_openmp_policy": ("RUNTIME_ERROR", r"^RuntimeError: OMP_WAIT_POLICY=None$"),
    "small_kernel_zero_claim": ("RUNTIME_ERROR", PROFILE_REFUSED),
    "exit_teardown_across_freeze": ("PASSED", r"^$"),
    "patch_json_dumps": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                                          r"json\.dumps$"),
    "work_in_function_mode": ("RUNTIME_ERROR", r"^(CandidateError: a call left a torch "
                                               r"function or dispatch mode active|harness "
                                               r"integrity: candidate code replaced the "
                                               r"torch function or dispatch mode stack "
                                               r"\(a mode left active\))$"),
    # the worker's first use of the timed path is warmed at load, in the stand-in alike
    "preimport_numpy_random": ("PASSED", r"^$"),
    # harness requests answered just before their deadline (the handler table is immutable)
    "drip_feed_stall": ("PASSED", r"^$"),
    # a child held in a 40 GiB page-table walk keeps the worker from freezing for seconds
    # (where the walk is slow enough: on a 16-core H100 host it was not, and it passed)
    "freeze_populate_stall": (("RUNTIME_ERROR", "PASSED"),
                              r"^(the worker's processes did not stop within 1 s when "
                              r"frozen \(while the stand-in was timed\))?$"),
    # the worker's request path is bound before candidate code: a name replaced on
    # ``io``, ``select``, ``functools``, ``torch.Tensor`` or ``torch`` never sees a request
    # (each candidate answers wrong unless its hook saw one)
    "functools_partial_seed_early": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "reqrewrite_arenas_dict_subclass": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "reqrewrite_copy_skip": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "reqrewrite_drop_unmask": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "reqrewrite_seed_int_subclass": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "reqrewrite_self_removing_shadow": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "select_poll_recv_hook": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "tensor_set_fake_slots": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "reqrewrite_exit_ignored": ("PASSED", r"^$"),
    # the worker's messages go through the socket its serve loop held before candidate
    # code: a proxy put in ``Channel.sock`` sees none of them, and is reported
    "proxy_drop_unmask_nothread": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                                    r"replaced .*Channel\.sock$"),
    "proxy_checks_off": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                                          r".*Channel\.sock$"),
    "thread_proxy_drop_unmask": (("RUNTIME_ERROR", "INCORRECT_NUMERICAL"),
                                 r"^((CandidateError: )?harness integrity: candidate "
                                 r"code replaced Channel\.sock|eager timing trial \d: y: "
                                 r".*)$"),
    # the last message's objects are freed between messages, and a trial reads its
    # request's fields before any candidate code: a finalizer planted in a request or a
    # reply rewrites neither the next request nor the next reply
    "oldrequest_del": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "reply_del_copy_skip": ("INCORRECT_SHAPE", r"^eager timing trial 1: y: shape \(1,\) "
                                               r"!= \(1, 8\)$"),
    "checked_to_trial": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                                          r"hf_eval\.isolation\.server\.CANDIDATE_MARK$"),
    # the collector turned back on, so that the harness's own allocations run a finalizer
    # while a message is in hand: it is off again before every receive, check and send
    "gc_chain_request": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "gc_chain_checked": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                                          r"hf_eval\.isolation\.server\.MAX_TEXT$"),
    # a raised exception's finalizer, and one in the calls' closures: held until the send
    "exc_del_forge": ("RUNTIME_ERROR", r"^Done: done$"),
    "trial_closure_del": ("INCORRECT_SHAPE", r"^first call: y: shape \(1,\) != \(1, 8\)$"),
    # a profile function's changes to a frame's locals are written back (3.11, 3.12):
    # every profile, trace and monitoring function is refused in the worker
    "trampoline_serve_locals": ("RUNTIME_ERROR", PROFILE_REFUSED),
    "trampoline_recv_swap": ("RUNTIME_ERROR", PROFILE_REFUSED),
    # a signal handler of the candidate's, set off by the channel (SIGIO): every handler
    # is put back as it was before a message is received and before a trial's checks, and
    # the filter now refuses signal-driven I/O itself (the fcntl that sets it fails)
    "sigio_profile": ("RUNTIME_ERROR", SIGNAL_IO_REFUSED),
    "sigio_copy_skip": ("RUNTIME_ERROR", SIGNAL_IO_REFUSED),
    # a name the message path calls (the reply's encoder) rebound: put back before every
    # receive and send, and reported
    "dumps_hide_integrity": ("COMPILE_ERROR", RENAMED),
    "dumps_error_to_ok": ("RUNTIME_ERROR", RENAMED),
    "dumps_selfrestore": ("RUNTIME_ERROR", RENAMED),
    # the reply's encoder reached through json's own names, and the record of the names
    # made to agree (it is immutable): put back and reported
    "json_encoder_cls": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                                          r"json\.JSONEncoder$"),
    "c_make_encoder": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                                        r"json\.encoder\.c_make_encoder$"),
    "saved_copy_poison": ("RUNTIME_ERROR", r"^ValueError: too many values to unpack"),
    "putback_hasheq": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                                        r"hf_eval\.isolation\.server\.<a name that is not "
                                        r"a str>$"),
    # the reply encoder's class methods replaced for one reply: replies are encoded by
    # JSON's compiled encoder, made before any candidate code
    # (the encoder's class is on the message path: its methods are put back and reported)
    "jsonenc_encode_attr": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate "
                                             r"code replaced json\.encoder\.JSONEncoder\.encode$"),
    "jsonenc_iterencode_attr": ("RUNTIME_ERROR",
                                r"^CandidateError: harness integrity: candidate code replaced "
                                r"json\.encoder\.JSONEncoder\.iterencode$"),
    # the state check read the slots through torch.Tensor's names (now the C accessors),
    # and a kernel registered after the calls' check: checked again before the copies
    "state_dataptr_meta": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                                            r"Tensor\.data_ptr$"),
    "state_nbytes_libcopy": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                                              r"Tensor\.nbytes$"),
    # a harness name or a worker's method rebound in a call and put back by its own code
    # later: every name and class is put back (and reported) right after the calls
    "rebound_after_calls_a": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                               r"candidate code replaced hf_eval\.isolation"
                                               r"\.server\._kernels_replaced$"),
    "rebound_after_calls_b": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                               r"candidate code replaced hf_eval\.isolation"
                                               r"\.server\._perf_counter$"),
    "rebound_after_calls_c": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                               r"candidate code replaced Worker\._sync$"),
    "rebound_after_calls_d": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                               r"candidate code replaced Worker\.slots$"),
    # a table of Python kernels of the candidate's class, whose own methods the check
    # would run: read through dict's and object's methods, and told by identity
    "pyk_items_unmask": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate "
                                          r"code replaced a kernel of aten::random_\.from$"),
    "pyk_items_collect_compute": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                                   r"candidate code replaced a kernel of "
                                                   r"aten::copy_$"),
    # a Python kernel for the copy, which the dispatch table does not show (the Python
    # dispatcher's switch is a key the thread includes: found with the thread's keys,
    # the first check after the calls)
    "pydispatch_copy": ("RUNTIME_ERROR", KEYS_CHANGED),
    # a kernel registered for an operator the harness runs in a trial (the flush's sum,
    # the copy into the slots): refused before the calls and after them
    "library_sum_flush": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate "
                                           r"code replaced a kernel of aten::sum$"),
    "library_copy_override": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                               r"candidate code replaced a kernel of "
                                               r"aten::copy_$"),
    # signal handlers freed by the put-back (held instead), or setting each other again
    "sigdel_after_calls": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate "
                                            r"code replaced a signal's handler$"),
    "sigdel_persist_sigio": ("RUNTIME_ERROR", SIGNAL_IO_REFUSED),
    # a container key of the candidate's class, whose __eq__ a lookup would run
    "dictkey_eq_precompute": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                               r"candidate code replaced Worker\.sets$"),
    # the socket's class changed: its descriptor is registered by number, and the class
    # is reported
    "sockclass_fileno": ("RUNTIME_ERROR", CLASS_REFUSED),  # (the audit hook, since round 92)
    # another file at the channel's descriptor: the socket pair is refused (and a
    # descriptor that is not the channel's would be reported)
    "channel_descriptor_relay": ("COMPILE_ERROR", r"^PermissionError: \[Errno 1\] "
                                                  r"Operation not permitted$|^harness "
                                                  r"integrity: candidate code replaced the "
                                                  r"channel's descriptor$"),
    # the calls' results are held until the reply has left: no finalizer runs before it
    "finalizer_reply_proxy": ("INCORRECT_SHAPE", r"^first call: y: shape \(2,\) != \(1, 8\)$"),
    "warnings_enter_hook": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                                             r"warnings\.catch_warnings\.__enter__$"),
    "torch_oom_name_swap": ("RUNTIME_ERROR", r"^ValueError: a plain bug of the candidate's$"),
    "mutate_timed_input_forge_changed": ("INCORRECT_NUMERICAL",
                                         r"^eager timing trial 1: input\(s\) modified: x$"),
    # on CPU the audit reads the private copy it lent, whatever the worker's check says
    "cfunc_torch_equal_mutate": ("INCORRECT_NUMERICAL",
                                 r"^eager timing trial 1: input\(s\) modified: w, x$"),
    # inputs used as scratch in a timed call, put back after the reply: the bytes at
    # secret positions are copied inside the clock
    "clobber_inputs_restore_after_reply": ("INCORRECT_NUMERICAL",
                                           r"^eager timing trial 1: input\(s\) modified: "
                                           r"w, x$"),
    "phase_by_environment": ("PASSED", r"^$"),
    # caches across calls: fresh content per timed call, new content in the same buffers
    "cache_same_tensor": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "cache_by_call_count": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "cache_by_shape": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "cache_by_pointer": ("INCORRECT_NUMERICAL", r"^(eager timing trial \d|second input set): y: "),
    "cache_by_fingerprint": ("PASSED", r"^$"),  # never hits, so never faster
    # timed content is staged masked: what a thread computes ahead is never asked for
    "precompute_staged": ("PASSED", r"^$"),
    "cache_by_content_hash": ("PASSED", r"^$"),
    # the truth and the dataset are unreadable; the audit's memory is out of sight
    "read_reference_cache": ("RUNTIME_ERROR", DENIED),
    "read_blob": ("RUNTIME_ERROR", DENIED),
    "read_workload_file": ("RUNTIME_ERROR", DENIED),
    "read_parent_memory": ("RUNTIME_ERROR", UNSEEN),
    "process_vm_readv": ("RUNTIME_ERROR", UNSEEN),
    "proc_environ_of_parent": ("RUNTIME_ERROR", UNSEEN),
    # what it finds is an output slot the audit registered (zeros, or its own earlier
    # outputs): never a reference, so it returns the wrong answer
    "gc_scan_truth": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "network": ("RUNTIME_ERROR", r"Network is unreachable|" + DENIED),
    # the memory the audit lends: sealed, read-only where the audit reads it back
    "mutate_then_undo": ("RUNTIME_ERROR", r"killed by SIGSEGV .*inputs are mapped read-only"),
    "write_input_proc_mem": ("RUNTIME_ERROR", DENIED),
    "truncate_lent_buffers": ("RUNTIME_ERROR", DENIED),
    "remap_input_writable": ("RUNTIME_ERROR", DENIED),
    # nothing outlives the worker; no worker reaches the next one
    "leave_file": ("RUNTIME_ERROR", DENIED),
    "leave_process": ("PASSED", r"^$"),  # allowed to start it; it dies with the worker
    "leader_exit_child": ("PASSED", r"^$"),
    "fork_chain": ("PASSED", r"^$"),
    "sysv_shm": ("PASSED", r"^$"),
    "sysv_shm_again": ("PASSED", r"^$"),  # finds nothing the first one left
    "signal_everything": ("PASSED", r"^$"),  # reaches nothing outside its own worker
    "spin_hog": ("PASSED", r"^$"),
    # resources: the candidate's failure, never the audit's
    # (the group's memory cap kills it; without one, its address-space limit refuses it)
    "exhaust_memory": ("RUNTIME_ERROR",
                       r"^worker process died: out of memory|can't allocate memory"),
    "fill_private_dir": ("RUNTIME_ERROR", r"No space left on device"),
    "fork_bomb": ("RUNTIME_ERROR", r"Resource temporarily unavailable"),
    # the harness inside the worker and the channel: patched, forged, flooded, stalled
    "patch_timer": ("COMPILE_ERROR", r"harness integrity: .*time.perf_counter"),
    "patch_torch": ("COMPILE_ERROR", r"harness integrity: .*Tensor.clone"),
    # (the trial's own reply, with the time of the rebound clock, is refused first)
    "rebind_harness_global": ("RUNTIME_ERROR",
                              r"harness integrity: .*hf_eval.isolation.server._perf_counter|"
                              r"^result channel tampering: event_ms is not a number of ms"),
    "forge_result": ("RUNTIME_ERROR", r"result channel tampering"),
    "forge_event_time": ("PASSED", r"^$"),  # the audit's own clock counts the time
    "flood_channel": ("RUNTIME_ERROR", r"^result channel tampering: malformed message header"),
    # a reply is bounded before JSON builds it in the audit's memory
    "reply_json_amplify": ("RUNTIME_ERROR", r"^result channel tampering: malformed message "
                           r"header \(2097151 bytes"),
    "reply_with_descriptor": ("RUNTIME_ERROR", r"replies carry none"),
    "stall_mid_message": ("TIMEOUT", r"^no answer within 10 s$"),
    # an urgent byte on the channel: no read waits past the deadline, and it is no message
    # fs.file-max is raised above what every worker group could open within its cap
    "file_table_within_reach": ("RUNTIME_ERROR", r"^RuntimeError: the host's open-file table "
                                r"is out of this worker's reach$"),
    "channel_urgent_byte": ("RUNTIME_ERROR", r"^result channel tampering: malformed message: "
                            r"out-of-band data \(MSG_OOB\) on the channel$"),
    "forge_huge_event_time": ("RUNTIME_ERROR", r"^result channel tampering: event_ms is not"),
    # (a million walls do not fit in a reply: refused by its size, or by the walls rule)
    "forge_walls": ("RUNTIME_ERROR", r"^result channel tampering: (malformed message header|"
                                     r"walls is not a short list)"),
    "pickle_bomb_reply": ("RUNTIME_ERROR", r"^result channel tampering: unreadable message"),
    # (the check it replaced is put back before the checks run: they report what it hid)
    "replace_integrity_check": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                r"replaced time\.perf_counter, Tensor\.clone$"),
    # kernel objects no namespace isolates, disk and memory no group charges: refused
    "keyring_carry": ("RUNTIME_ERROR", DENIED),
    "socket_buffers": ("RUNTIME_ERROR", DENIED),
    "fill_log": ("RUNTIME_ERROR", DENIED),
    # a harness function's code swapped in place: refused by the worker's audit hook
    # (a check that still ran would name it), also for a generated method, and a global
    # added to a harness module, named like a builtin (a zip of the candidate's)
    "swap_integrity_code": ("COMPILE_ERROR", r"^RuntimeError: a harness function's "
                                             r"__code__ may not change in the worker$"),
    "dataclass_method_code_swap": ("COMPILE_ERROR", r"^RuntimeError: a harness function's "
                                                    r"__code__ may not change in the "
                                                    r"worker$"),
    "shadow_builtin_in_harness": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                                   r"replaced hf_eval\.isolation\.server\.zip$"),
    # ... and the same copy onto itself through builtins, or through the addresses and
    # devices the overlap check reads (which the worker reads through the C types)
    "builtins_zip_slot_self_copy": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                                     r"replaced builtins\.zip$"),
    "storage_data_ptr_slot": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                               r"replaced UntypedStorage\.data_ptr$"),
    # (the worker's own overlap check may refuse the slot first: it reads through C types)
    "storage_data_ptr_in_run": ("RUNTIME_ERROR", r"^(harness integrity: candidate code "
                                                 r"replaced UntypedStorage\.data_ptr|"
                                                 r"CandidateError: output 0 lies in the "
                                                 r"harness's output slots \(outputs are the "
                                                 r"candidate's own tensors\))$"),
    "tensor_device_slot": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                            r"replaced Tensor\.device$"),
    "datagram_sockets": ("RUNTIME_ERROR", DENIED),
    "watch_tmp": ("RUNTIME_ERROR", DENIED),
    "peek_cgroups": ("PASSED", r"^$"),  # an empty /sys/fs/cgroup: nothing to see
    "prepare_computes_answer": ("INCORRECT_NUMERICAL", r"^prepared timing trial 1: y: "),
    "io_uring_side_door": ("RUNTIME_ERROR", DENIED),
    "timer_storm_floor": ("RUNTIME_ERROR", r"^PermissionError: .*timer_create: Operation not "
                          r"permitted"),
    "user_namespace_loopback": ("RUNTIME_ERROR", r"^PermissionError: unshare: Operation not "
                                r"permitted, clone: Operation not permitted, setns: "
                                r"Operation not permitted, clone3: Function not implemented"),
    "timer_sources": ("RUNTIME_ERROR", r"^PermissionError: timerfd_create: Operation not "
                      r"permitted, setitimer: Operation not permitted, alarm: Operation not "
                      r"permitted"),
    "netlink_socket_buffers": ("RUNTIME_ERROR", r"^PermissionError: netlink route: Operation "
                               r"not permitted, netlink usersock: Operation not permitted"),
    "socket_option_memory": ("RUNTIME_ERROR", r"^PermissionError: tcp md5 key: Operation "
                             r"not permitted, ip ttl: Operation not permitted"),
    "perf_events_and_reuseport": ("RUNTIME_ERROR", r"^PermissionError: perf_event_open: "
                                  r"Operation not permitted, SO_REUSEPORT: Operation not "
                                  r"permitted"),
    "socket_kinds_and_dnotify": ("RUNTIME_ERROR", r"^PermissionError: unix raw: Operation not "
                                 r"permitted, mptcp: Operation not permitted, "
                                 r"SO_BINDTOIFINDEX: Operation not permitted, F_NOTIFY: "
                                 r"Operation not permitted$"),
    "xattr_numa_secretmem": ("RUNTIME_ERROR", r"^PermissionError: setxattr: Operation not "
                             r"permitted, lsetxattr: Operation not permitted, fsetxattr: "
                             r"Operation not permitted, setxattrat: Operation not permitted, "
                             r"mbind: Operation not permitted, set_mempolicy_home_node: "
                             r"Operation not permitted, memfd_secret: Operation not "
                             r"permitted$"),
    "core_descriptors_merging": ("RUNTIME_ERROR", r"^PermissionError: core: limit \(1, 1\), "
                                 r"descriptors: hard limit 1024, prctl merge: Operation not "
                                 r"permitted, prctl sched core: Operation not permitted, "
                                 r"madvise merge: Operation not permitted$"),
    "sysfs_btf_mapping": ("RUNTIME_ERROR", r"^PermissionError: btf: Permission denied, cpu "
                          r"online: readable$"),
    "pressure_mseal_uclamp": ("RUNTIME_ERROR", r"^PermissionError: pressure: Read-only file "
                              r"system, mseal: Operation not permitted, sched_setattr: "
                              r"Operation not permitted$"),
    "tmpfs_inodes_vma_names": ("RUNTIME_ERROR", r"^PermissionError: private: 65536 files, "
                               r"shm: 65536 files, vma name: Operation not permitted$"),
    "collect_self_removing_shadow": ("RUNTIME_ERROR", SHADOWS_COLLECT),
    "channel_hasheq_hides_collect": (
        "COMPILE_ERROR",
        r"^harness integrity: candidate code replaced "
        r"Worker\.collect, Channel\.<an attribute name that is not a str>$"),
    "module_class_profile_relay": ("COMPILE_ERROR", MODULE_CLASS_REFUSED),
    "gc_module_class_hides_state": ("COMPILE_ERROR", MODULE_CLASS_REFUSED),
    "worker_dict_reorder_eq_in_get": (
        "COMPILE_ERROR",
        r"^harness integrity: candidate code replaced "
        r"Worker\.<an attribute name that is not a str>$"),
    "added_submodule_named_zip": (
        "COMPILE_ERROR",
        r"^harness integrity: candidate code replaced "
        r"hf_eval\.isolation\.server\.zip$"),
    "socket_module_class_hides_state": ("COMPILE_ERROR", MODULE_CLASS_REFUSED),
    "json_module_class_forges_send": ("COMPILE_ERROR", MODULE_CLASS_REFUSED),
    "request_op_relabel_lent": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                r"replaced Worker\.lent$"),
    "worker_device_object": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                             r"Worker\.device$"),
    "sys_getprofile_fake_clears_tampered": ("COMPILE_ERROR", r"^harness integrity: candidate "
                                            r"code replaced builtins\.zip$"),
    "threading_getprofile_fake_hides_zip": ("COMPILE_ERROR", r"^harness integrity: candidate "
                                            r"code replaced builtins\.zip, "
                                            r"threading\.gettrace$"),
    "enumprop_hook_forges_reply": ("PASSED", r"^$"),  # honest work; no forged figure (below)
    "printer_getattr_hides_zip": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                  r"replaced hf_eval\.isolation\.server\.zip$"),
    "decoder_getattr_hides_builtin_zip": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                          r"replaced builtins\.zip$"),
    "pydantic_meta_hook_hides_unmask": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                        r"replaced hf_eval\.isolation\.server\.unmask$"),
    "class_names_cache_poison": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                 r"replaced Worker\.collect$"),
    # the serve loop keeps the socket it held: the one the candidate closed fails its send
    "channel_sock_swap_forge": (("COMPILE_ERROR", "RUNTIME_ERROR"),
                                r"^(harness integrity: candidate code replaced Channel\.sock$|"
                                r"worker process died \(exit code 1\))"),
    "containers_dict_clear": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                              r"candidate code replaced Worker\.slots$"),
    "module_typed_builtin_shadow": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                    r"replaced hf_eval\.isolation\.server\.zip$"),
    "module_typed_class_hook": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                                r"(hf_eval\.isolation\.server\.)?Worker\.__getattribute__$"),
    "socket_sendall_forge": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                             r"socket\.send_fds, socket\.socket\.sendall$"),
    # the trial calls the collect bound at its definition: the garbage is copied, and the
    # class's replacement (never put back) is reported
    "class_collect_self_restoring": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                     r"replaced (hf_eval\.isolation\.server\.)?Worker\."
                                     r"collect$"),
    # the output path reads tensors through the C accessors: the property never runs
    "tensor_property_in_checked": ("INCORRECT_NUMERICAL", r"^first call: y: 8 of 8 elements"),
    "torch_module_class_in_checked": ("COMPILE_ERROR", MODULE_CLASS_REFUSED),
    "host_cache_and_writeback": ("RUNTIME_ERROR", r"^PermissionError: fadvise64: Operation not "
                                 r"permitted, sync: Operation not permitted, syncfs: Operation "
                                 r"not permitted, sync_file_range: Operation not permitted$"),
    "ptrace_traceme": ("RUNTIME_ERROR", r"^PermissionError: ptrace: Operation not permitted$"),
    "clear_death_signal": ("RUNTIME_ERROR", r"^PermissionError: clear: Operation not "
                           r"permitted, SIGTERM: Operation not permitted$"),
    "seccomp_stack_and_aio": ("RUNTIME_ERROR", r"^PermissionError: seccomp: Operation not "
                              r"permitted, prctl seccomp: Operation not permitted, io_setup: "
                              r"Operation not permitted"),
    "huge_error_text": ("RUNTIME_ERROR", r"^RuntimeError: "),
    "error_str_raises": ("RUNTIME_ERROR", r"^Unprintable$"),
    "crash": ("RUNTIME_ERROR", r"SIGSEGV"),
    "crash_mid_timing": ("RUNTIME_ERROR", r"^worker process died: killed by SIGSEGV"),
    # the worker is its PID namespace's first process: abort() ends in a fault
    "abort_in_timed_call": ("RUNTIME_ERROR", r"^worker process died: killed by SIGSEGV "
                            r"\(.*so does abort\(\)"),
    "hang": ("TIMEOUT", r"no answer within 10 s"),
    # the launch gate swapped for the candidate's object: the worker's state check types it
    "gate_object_swap": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                         r"Worker\.gate$"),
    # KeyboardInterrupt in the worker's main thread once a reply has left: the worker
    # dies of it, the candidate's failure
    # (its thread waits for a reply to leave: on a loaded machine the case can end first,
    # and it computed honestly)
    "interrupt_main_after_reply": (("RUNTIME_ERROR", "PASSED"),
                                   r"^(worker process died \(exit code 1\)|$)"),
    # millions of cyclic objects for every ``forget`` to walk: slow requests, still PASSED
    "gc_bloat_forget_stall": ("PASSED", r"^$"),
    # the core limit cannot be raised, so no core-dump helper starts outside the walls
    "core_dump_helper": ("RUNTIME_ERROR", r"^RuntimeError: setrlimit: "),
    # the GIL held for most of a second after each reply: harness requests wait, under
    # the session's budget
    "gil_hold_checked_stall": ("PASSED", r"^$"),
    # an object of the candidate's set as the channel's ``restricted`` flag, whose truth
    # test ran inside the worker's send and receive: the worker's end of the channel is
    # two functions that read no state of the channel object
    "channel_flag_send_hook": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "channel_flag_recv_rewrite": ("INCORRECT_NUMERICAL", r"^eager timing trial 1: y: "),
    "channel_flag_skip_trial": ("PASSED", r"^$"),  # honest, and no faster (below)
    "channel_flag_forged_claim": ("PASSED", r"^$"),
    "reply_dtype_lazy_import": ("PASSED", r"^$"),  # the audit's side: tests/test_isolation.py
    # the channel's reads shadowed on the instance: the channel has no such method now
    "channel_read_shadow": ("COMPILE_ERROR", r"^KeyError: '_read'$"),
    # an operator's class swapped for one whose ``__dict__`` property runs in the kernel
    # check: the class is compared, and the namespace read through the bound slot
    # (refused by the worker's audit hook since round 92; the check stays, for a class
    # changed by a write to memory)
    "operator_class_dict_collect": ("COMPILE_ERROR", CLASS_REFUSED),  # at its import
    "operator_class_dict_unmask": ("COMPILE_ERROR", CLASS_REFUSED),
    # a finalizer on every tensor, run as the harness's own temporaries died
    "tensor_del_detached_outputs": ("RUNTIME_ERROR", r"^(CandidateError: )?harness "
                                    r"integrity: candidate code replaced "
                                    r"torch\.Tensor\.__del__$"),
    # names looked up as the put-back and the signals' restore ran: both now call only
    # what they bound, the put-back restores ``builtins`` first, signals go through the
    # C module
    "signal_module_lookup_hook": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "putback_builtin_len": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                            r"candidate code replaced builtins\.len$"),
    "traceback_len_forge": ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced "
                            r"builtins\.len$"),
    "catch_warnings_enter": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                             r"warnings\.catch_warnings\.__enter__$"),
    # the worker's own class swapped for a subclass whose methods, ``__dict__``,
    # ``__setattr__`` or ``__getattribute__`` ran in the trial: the worker's audit hook
    # refuses a new class for any object of the harness's
    "worker_class_swap_sync": ("RUNTIME_ERROR", CLASS_REFUSED),
    "worker_class_swap_dictprop": ("RUNTIME_ERROR", CLASS_REFUSED),
    "worker_class_swap_setattr": ("RUNTIME_ERROR", CLASS_REFUSED),
    "worker_class_swap_getattribute": ("RUNTIME_ERROR", CLASS_REFUSED),
    # the channel's unpickler's ``load`` set for every receive (re-armed by a finalizer
    # at the serve loop's top), rewriting requests' fields into str and int subclasses:
    # every class of the message path's modules is put back before a receive
    "unpickler_load_chain": ("RUNTIME_ERROR", UNPICKLER_LOAD),
    "unpickler_op_reply_forge": ("RUNTIME_ERROR", UNPICKLER_LOAD),
    "unpickler_nout_collect": ("RUNTIME_ERROR", UNPICKLER_LOAD),
    "unpickler_flush_bool": ("RUNTIME_ERROR", UNPICKLER_LOAD),
    "unpickler_op_skip_checks": ("RUNTIME_ERROR", UNPICKLER_LOAD),
    "unpickler_findclass_register": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                     r"candidate code replaced _Unpickler\.find_class$"),
    # an entry of ``warnings.filters`` whose comparison ran in every receive: no receive
    # goes through the warnings machinery now
    "warnings_filter_eq": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    # a storage's ``__del__``: torch keeps the storage's Python object alive
    "storage_del_span": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "catch_warnings_exit_selfrestore": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                        r"replaced warnings\.catch_warnings\.__exit__$"),
    # an error whose metaclass and text try to read as a success: an error, named by its
    # class's own name (the metaclass's ``__name__`` is not read)
    "one_line_metaclass": ("RUNTIME_ERROR", r"^_Err: ok$"),
    # keys of the candidate's class (hashed like a name, answering its own ``__eq__``)
    # planted in the dicts the worker reads after candidate code: every such dict is
    # walked for a key that is not a str before it is read, and the serve loop looks up
    # nothing between a handler and its put-back
    "oddkey_builtins_relay": ("RUNTIME_ERROR", ODD_KEY.format(where=r"hf_eval\.isolation\.server")),
    "oddkey_forged_claim": ("RUNTIME_ERROR", ODD_KEY.format(where=r"hf_eval\.isolation\.server")),
    "oddkey_exception_text": ("RUNTIME_ERROR", ODD_KEY.format(where="builtins")),
    "oddkey_traceback_erase": ("RUNTIME_ERROR", ODD_KEY.format(where="builtins")),
    "oddkey_send_relay": ("RUNTIME_ERROR", ODD_KEY.format(where="builtins")),
    "oddkey_tensor_names": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                            r"candidate code replaced torch\.Tensor\.__del__$"),
    "oddkey_gc_names": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: candidate "
                        r"code replaced gc\.callbacks \(a collector callback left set\)$"),
    "oddkey_operator_request_rewrite": ("RUNTIME_ERROR", r"^(CandidateError: )?harness "
                                        r"integrity: candidate code replaced a kernel of "
                                        r"aten::sum$"),
    "oddkey_operator_collect": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                r"candidate code replaced a kernel of aten::copy_$"),
    # the harness's own tables are tuples of pairs now: nothing in them to plant a key in
    "oddkey_arena_parts": ("COMPILE_ERROR", NO_TABLE),
    "oddkey_channel_dtypes": ("COMPILE_ERROR", NO_TABLE),
    "oddkey_checked_erase": ("COMPILE_ERROR", NO_TABLE),
    # a thread that fills the outputs while the harness runs its steps, the switch
    # interval shortened: put back after the calls (a race the thread may still win, no
    # faster: "What remains")
    "switch_interval_thread_fill": (("INCORRECT_NUMERICAL", "PASSED"), RACE_LOST_OR_WON),
    # a launch gate of the candidate's making on a CPU worker, its dict holding a key hashed
    # like one of its names: a gate's dict is walked before it is read, and a CPU worker has
    # no gate
    "oddkey_fake_gate": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: candidate "
                         r"code replaced Worker\.gate$"),
    # such a key in the worker's own dict, hashed like ``channel``: walked before the first
    # attribute is read, and named without formatting the key
    "oddkey_worker_channel": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                              r"candidate code replaced Worker\.<a name that is not a str>$"),
    # a weakref callback on the trial's list comprehension, fired right after the calls:
    # the put-back runs first
    "weakref_callback_after_calls": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                     r"candidate code replaced hf_eval\.isolation\.server\."
                                     r"_restore_signals$"),
    # a SIGINT aimed at ``collect`` from a helper process: the worker dies, the candidate's
    "sigint_in_collect": ("RUNTIME_ERROR", r"^worker process died \(exit code 1\)"),
    # round 93's thread, re-arming a short switch interval whenever it runs: lost its race
    "switch_interval_rearm": (("INCORRECT_NUMERICAL", "PASSED"), RACE_LOST_OR_WON),
    # finalizers in what the harness itself freed with a message in hand: the list of the
    # last trial's outputs (replaced after the calls) and the serve loop's last result
    # (replaced by the next): both are held until the reply has left now
    "finalizer_in_produced": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "finalizer_in_last_result_fill": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "finalizer_in_last_result": ("PASSED", r"^$"),  # honest work, its claim unforged (below)
    # the worker's record of the lent memory replaced by a tuple whose elements (objects
    # of the candidate's, or tuple subclasses) answer the state check's comparison: the
    # record's elements are told to be plain pairs of ints first
    "lent_record_element_eq": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                               r"candidate code replaced Worker\.slots$"),
    "lent_record_tuple_subclass": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                   r"candidate code replaced Worker\.slots$"),
    # round 92's and 93's closes retried on the channel: its class swap is refused (the
    # calls then return zeros), a key hashed like ``sock`` in its dict is reported
    "channel_class_swap": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "oddkey_channel_sock": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                            r"candidate code replaced Channel\.<an attribute name that is "
                            r"not a str>$"),
    # the worker's list of pinned addresses replaced by a list subclass whose truth test
    # ran in the slots request, and its captured graph by a tuple subclass whose indexing
    # would run after a graph trial's calls: both are told to be plain first
    "pinned_list_bool": ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                         r"Worker\.pinned$"),
    "graph_tuple_getitem": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                            r"candidate code replaced Worker\.graph$"),
    # a handler set through libc (``ctypes``), which the interpreter's table of handlers
    # does not show: for a fault in memory handed back as an output (PROT_NONE, a file
    # truncated under its mapping), it would compute the outputs inside the harness's copy
    # of them, after every check; on the channel's SIGIO, run inside every receive. Every
    # signal's disposition is set again after the calls and before each receive, so the
    # fault kills the worker and the SIGIO handler never runs
    "fault_handler_in_copy": ("RUNTIME_ERROR", r"^worker process died: killed by SIGSEGV "),
    "fault_handler_does_all": ("RUNTIME_ERROR", r"^worker process died: killed by SIGSEGV "),
    "sigbus_handler_regrows_output": ("RUNTIME_ERROR",
                                      r"^worker process died: killed by SIGBUS "),
    "sigio_handler_on_channel": ("RUNTIME_ERROR",
                                 r"^RuntimeError: C-level SIGIO handler ran 0 times "),
    # signal-driven I/O on the channel with the C library's own signals (32, 33), set
    # with the raw syscall, which the worker cannot set back: refused by the filter
    "sig32_handler_on_channel": ("COMPILE_ERROR", SIGNAL_IO_REFUSED),
    "sig33_handler_on_channel": ("COMPILE_ERROR", SIGNAL_IO_REFUSED),
    "sig32_swap_before_calls": ("COMPILE_ERROR", SIGNAL_IO_REFUSED),
    "signal_driven_io_kinds": ("RUNTIME_ERROR", r"^PermissionError: F_SETOWN: Operation not "
                               r"permitted, F_SETOWN_EX: Operation not permitted, F_SETSIG: "
                               r"Operation not permitted, O_ASYNC: Operation not permitted, "
                               r"FIOASYNC: Operation not permitted, FIOSETOWN: Operation not "
                               r"permitted, SIOCSPGRP: Operation not permitted, F_SETLEASE: "
                               r"Operation not permitted$"),
    # an exception whose type's name reads like the audit's finding: quoted as the
    # candidate's text
    "exception_name_blames_data": ("RUNTIME_ERROR", r"^\"DATA_ERROR \(the workload's data"),
    "exception_name_blames_harness": ("RUNTIME_ERROR", r"^\"harness failure \(not the "),
    # an interpreter pending call (no thread, no signal) that queues itself again, so it
    # runs at every function entry of the harness's steps: there it filled the outputs
    # after the checks, edited the next trial's request, wrote the slots after the reply,
    # or turned an integrity report into a success; refused at the lookup (by name,
    # through the C library's own ``dlsym``, or from the interpreter's test module)
    "pending_call_fills_outputs": ("COMPILE_ERROR", PENDING_REFUSED),
    "pending_call_edits_request": ("COMPILE_ERROR", PENDING_REFUSED),
    "pending_call_after_reply": ("COMPILE_ERROR", PENDING_REFUSED),
    "pending_call_hides_report": ("COMPILE_ERROR", PENDING_REFUSED),
    "pending_call_by_address": ("COMPILE_ERROR", r"^RuntimeError: dlsym may not be looked up "
                                r"through ctypes in the worker "),
    "testcapi_pending_call": ("COMPILE_ERROR", r"^RuntimeError: _testcapi: the interpreter's "
                              r"test modules are not allowed in the worker$"),
    # torch's frame-evaluation callback (PEP 523, no audit event), left set on the main
    # thread so that it runs at the start of every harness function: it filled the
    # outputs after the checks (cheaply too, skipping most functions), edited the next
    # trial's request, or turned an integrity report into a success; set to None right
    # after the calls and every handler, before any Python function, and reported
    "eval_frame_fills_outputs": ("RUNTIME_ERROR", EVAL_FRAME_LEFT),
    "eval_frame_fills_cheaply": ("RUNTIME_ERROR", EVAL_FRAME_LEFT),
    "eval_frame_edits_request": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                 r"replaced torch's frame-evaluation callback"),
    "eval_frame_hides_report": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                r"replaced torch\.equal$"),
    # a fallback of the candidate's for a dispatch key (``PrivateUse1``) that the thread
    # was left including, or keys left excluded: torch's own operations in the harness's
    # steps (a cold trial's flush, the poisoning) would go to the candidate's code; the
    # thread's keys are compared with the worker's first ones after the calls and in
    # every check
    "dispatch_key_fallback": ("RUNTIME_ERROR", KEYS_CHANGED),
    "dispatch_key_fallback_witness": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                      r"replaced the thread's dispatch keys "),
    "dispatch_keys_excluded": ("RUNTIME_ERROR", KEYS_CHANGED),
    # a plain torch.Tensor that kept a subclass's Python dispatch key (made as a subclass,
    # then its class set back): the harness's own detach, shape read and copy would run
    # the candidate's handler, after the checks; refused by its keys, read first
    "python_key_plain_detach": ("RUNTIME_ERROR", NOT_PLAIN_KEY),
    "python_key_copy_into_slot": ("RUNTIME_ERROR", NOT_PLAIN_KEY),
    "python_key_sizes_lie": ("RUNTIME_ERROR", NOT_PLAIN_KEY),
    "python_key_class_dispatch": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                  r"candidate code replaced torch\.Tensor\."
                                  r"__torch_dispatch__$"),
    # a nested tensor as an output: refused by its keys, in the audit's words (torch's
    # own internal error before)
    "nested_tensor_output": ("RUNTIME_ERROR", NOT_PLAIN_KEY),
    # the frame-evaluation callback set where candidate code runs outside a handler: a
    # finalizer the serve loop frees at its top, or the error's text it formats; cleared
    # and reported after both too
    "eval_frame_from_finalizer": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                  r"replaced torch's frame-evaluation callback "),
    "eval_frame_from_error_text": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                   r"replaced torch's frame-evaluation callback "),
    # an output that is a lazy negation: the harness's copy would carry it out
    "negative_view_output": ("RUNTIME_ERROR", NOT_PLAIN_KEY),
    # KeyboardInterrupt from the candidate's code in the worker's error path (an error's
    # text, a traceback's source lines): the text ends there, the worker does not
    "error_text_raises_interrupt": ("RUNTIME_ERROR", r"^_Err$"),
    "source_lookup_raises_interrupt": ("RUNTIME_ERROR", r"^ValueError: boom$"),
    # an exception's type's name in capitals, as the audit's statuses, or in fullwidth
    # letters: quoted as the candidate's text
    "capital_name_blames_data": ("RUNTIME_ERROR", r"^'DATA_ERROR': \(the workload's data"),
    "fullwidth_name_blames_harness": ("RUNTIME_ERROR", r"^'\uff48\uff41\uff52"),
    # a crash's reason quotes the worker's output, which the candidate writes: quoted as
    # its own text, a line that reads like the audit's finding reads as the candidate's
    "log_line_blames_data": ("RUNTIME_ERROR",
                             r"^worker process died \(exit code 0\); the worker's own output "
                             r"\(candidate text, not the audit's\): \"\.\.\.hf_eval: "
                             r"DATA_ERROR: "),
    # the worker's device replaced by an object whose ``.type`` runs the candidate's code
    # where the harness reads it: after the calls' put-back (then rebinding the names the
    # rest of the trial calls, to fill the outputs or skip the harness's own steps), or
    # before the clock; every read of the device is told to be a torch.device
    "device_sync_gc_disable": ("RUNTIME_ERROR", DEVICE_REPLACED),
    "device_sync_copy_kernel": ("RUNTIME_ERROR", DEVICE_REPLACED),
    "device_sync_fault_handler": ("RUNTIME_ERROR", DEVICE_REPLACED),
    "device_sync_forge_skip": ("RUNTIME_ERROR", DEVICE_REPLACED),
    "device_sync_skip_only": ("RUNTIME_ERROR", DEVICE_REPLACED),
    "device_sync_encode_forge": ("RUNTIME_ERROR", DEVICE_REPLACED),
    "device_sync_eval_frame": ("RUNTIME_ERROR", DEVICE_REPLACED),
    "device_forget_arm": ("RUNTIME_ERROR", DEVICE_REPLACED),
    "thread_device_precall": ("RUNTIME_ERROR", DEVICE_REPLACED),
    # the list a trial's outputs go to, replaced by its calls with one holding a
    # finalizer, which the assignment after the clock would run
    "produced_swap_finalizer": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                r"candidate code replaced Worker\.produced$"),
    # the collector turned on by the calls: off again right after them, so the finalizer
    # that would fill the outputs (or forge the clock) in the harness's steps never runs
    "gc_enabled_after_calls": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "gc_clock_forge": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    # torch's warn-always switch turned on, so that a filter entry of the candidate's runs
    # inside every receive: off before each receive, and reported
    "warn_always_receive_hook": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                 r"replaced torch's warn-always switch \(left on\)$"),
    # a key of the candidate's class in sys.modules, met by the integrity check's lookup
    # (it emptied the check's findings): the table is walked for such keys first
    "sysmodules_oddkey_hides_guarded": ("COMPILE_ERROR", r"^harness integrity: candidate "
                                        r"code replaced sys\.modules \(a name that is not "
                                        r"a str\)$"),
    # processes cloned as the worker's siblings, in a new session, ignoring signals: none
    # outlives the audit
    "clone_parent_sibling": ("PASSED", r"^$"),
    # native code of the candidate's (a few bytes in executable memory) set as the
    # interpreter's frame-evaluation function or memory allocator through the C API,
    # which raises no audit event: it ran at the harness's first function entry or
    # allocation after the calls, and filled the outputs; the lookups are vetoed
    **{name: ("COMPILE_ERROR", NATIVE_HOOK_REFUSED.format(
        symbol="_PyInterpreterState_SetEvalFrameFunc"))
       for name in ("native_eval_frame_fill", "native_eval_frame_cheap",
                    "native_eval_frame_in_checked", "native_eval_frame_late_install",
                    "native_eval_frame_prepared", "native_eval_frame_fault_rearm",
                    "native_eval_frame_hides_report", "native_eval_frame_forge_claim",
                    "native_eval_frame_stall_checked", "fault_handler_no_hook")},
    "pymem_malloc_hook_fill": ("COMPILE_ERROR",
                               NATIVE_HOOK_REFUSED.format(symbol="PyMem_SetAllocator")),
    "pymem_mem_domain_hook_fill": ("COMPILE_ERROR",
                                   NATIVE_HOOK_REFUSED.format(symbol="PyMem_SetAllocator")),
    "capi_setprofile": ("COMPILE_ERROR", NATIVE_HOOK_REFUSED.format(symbol="PyEval_SetProfile")),
    # an audit hook added through the C API: vetoed by the worker's own hook, the
    # candidate's honest work passes
    "capi_addaudithook": ("PASSED", r"^$"),
    # the trial's own locals (its bound ``collect``, its put-back, its clock) rewritten
    # through the frame's locals and the C API's write-back: the lookup is vetoed
    "localstofast_collect": ("COMPILE_ERROR", STATE_WRITER_REFUSED),
    "localstofast_put_noop": ("COMPILE_ERROR", STATE_WRITER_REFUSED),
    "localstofast_unbound_blame": ("COMPILE_ERROR", STATE_WRITER_REFUSED),
    "localstofast_forge_clock": ("COMPILE_ERROR", STATE_WRITER_REFUSED),
    # a handler set through libc, fired at the main thread by a helper process so that it
    # lands in the harness's steps after the calls: a race (round 94's class); a handler
    # that lands inside the allocator may crash the worker or deadlock it (the timeout)
    "rawsig_window_fill": (("INCORRECT_NUMERICAL", "PASSED", "RUNTIME_ERROR", "TIMEOUT"),
                           r"^((first call|second input set|(eager|graph) timing trial \d+): "
                           r"(y|positive_rows): |$|" + RAW_HANDLER_CRASHED + ")"),
    # reports, never fills
    "rawsig_window_probe": (("RUNTIME_ERROR", "TIMEOUT"),
                            r"^(RuntimeError: STATS |" + RAW_HANDLER_CRASHED + ")"),
    # the wakeup descriptor pointed at the channel or at a full pipe: the candidate's stall,
    # within the request's deadline
    "wakeup_fd_channel": ("TIMEOUT", r"^no answer within \d+ s$"),
    "wakeup_fd_blocking_stall": ("TIMEOUT", r"^no answer within \d+ s$"),
    "rcvlowat_channel": ("PASSED", r"^$"),
    "uid_lock_squat": ("RUNTIME_ERROR", r"^RuntimeError: reached: "),  # reports what it saw
    "asyncgen_hooks": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    # the warnings filters changed in place, with torch's warn-always switch on
    "warnings_filters_inplace": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                 r"replaced torch's warn-always switch \(left on\)$"),
    "stderr_writer_fill": ("INCORRECT_NUMERICAL", r"^first call: y: "),
    "dev_random_drain": ("PASSED", r"^$"),
    "gc_unfreeze_forget": ("PASSED", r"^$"),
    # a method of a built-in or C type (dict.get, list.append, str.encode, the getter of
    # torch.device.type) replaced in the real dict behind the type's read-only namespace
    # (reached through gc, or handed over by the namespace's own comparison), so that the
    # harness's steps after the calls ran the candidate's code: every such table is put
    # back, with the slots alone, before any method is called by name, and reported
    **{name: ("RUNTIME_ERROR", TYPES_CHANGED) for name in (
        "devicetype_getset_checked",
        "dictget_proxy_collect",
        "dictget_stall_collect",
        "dictget_stall_forget",
        "dictget_trial_state_modified",
        "exit_request_stall",
        "listappend_modified_collect",
        "perfcounter_rebind_pre_handler",
        "proxyeq_leak_collect",
        "putback_proxy_in_trial",
        "serve_putback_channelclosed",
        "serve_request_rewrite",
        "serve_request_witness",
        "strencode_forge_claim",
        "strencode_forge_ok",
        "strencode_hide_renamed",
        "strencode_send_fill",
    )},
    "strencode_changed_scratch": ("RUNTIME_ERROR", r"^worker process died: killed by SIGSEGV"),
    # a key of the candidate's class added to a built-in type's table, hashed like a name
    # the table holds and equal to it: the restore's own lookups would run its code (a
    # fill after the calls, a forged reply, a method put back after its table was read);
    # the tables are walked for keys that are not a str before any lookup
    **{name: ("RUNTIME_ERROR", TYPES_CHANGED) for name in (
        "typetable_hashkey_fill",
        "typetable_type_table_fill",
        "typetable_slice_table_fill",
        "typetable_device_table_fill",
        "typetable_revive_dictget",
        "typetable_forge_claim_big",
        "typetable_stall_checked",
        "typetable_exit_serve_top",
        "typetable_interrupt_after_calls",
        "typetable_object_guarded",
    )},
    # the same key with calls that only raise: the candidate's error, not a forged reply
    "typetable_forge_error_reply": ("RUNTIME_ERROR", r"^ValueError: nothing computed$"),
    "typetable_forge_ok_noslots": ("RUNTIME_ERROR", r"^ValueError: nothing computed$"),
    # a child in a new session that ignores the end signals, forked at exit: ended with
    # the worker's namespace (the test finds no survivor)
    "atexit_setsid_child": ("PASSED", r"^$"),
    # the zeros the method-table candidates return, with no hook: judged wrong
    "control_zeros": ("INCORRECT_NUMERICAL", r"^first call: y: 8 of 8 elements outside"),
    # methods of the channel's and the reveal's C types replaced (the header's Struct,
    # poll, the unpickler, numpy's bit generator): a fill at the reply's send, a forged
    # served reply around the real one, a request rewritten or the tampering undone in a
    # receive; and the worker's own ctypes function for PyType_Modified given the
    # candidate's errcheck, restype or converters (it has none now): all tables put back
    **{name: ("RUNTIME_ERROR", TYPES_CHANGED) for name in (
        "struct_pack_fill",
        "struct_pack_selfclean",
        "struct_pack_stall",
        "struct_pack_fork_survivor",
        "struct_unpack_restore",
        "poll_register_restore",
        "unpickler_load_skip_checked",
        "philox_precompute",
        "forge_claim_honest",
        "forge_ok_putback_refusal",
        "errcheck_forge_ok",
        "errcheck_type_modified",
        "errcheck_argtypes",
        "errcheck_restype",
        "errcheck_interrupt",
    )},
    # a key of the candidate's class in ``threading``'s namespace, hashed like the hook
    # names the checks read there: ``threading`` is on the message path, put back (and
    # rebuilt without the key) after the calls and before every message
    **{name: ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                               r"replaced threading\.<a name that is not a str>$")
       for name in ("threading_oddkey", "threading_tracehook", "threading_stall",
                    "threading_fork_survivor")},
    # the same key, which takes itself out (and puts back the guarded name it replaced)
    # when the call's own insertion compares it: honest work, nothing left to report
    "threading_erase_checked": ("PASSED", r"^$"),
    "guarded_left_control": ("RUNTIME_ERROR",
                             r"^harness integrity: candidate code replaced torch\.equal$"),
    # a server global the trial read before its put-back (the dispatch keys' readers),
    # rebound by the calls and put back by the code it ran: read from defaults now, the
    # rebinding is found by the put-back
    "keyset_rebind": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                                       r"replaced hf_eval\.isolation\.server\._keyset_bits$"),
    "exclude_set_rebind": ("RUNTIME_ERROR",
                           r"^CandidateError: harness integrity: candidate code replaced "
                           r"hf_eval\.isolation\.server\._local_exclude_set$"),
    # a Python signal handler left pending by the calls, which the first handler put back
    # would run in the harness's steps: a handler the calls set is refused before any
    # is put back (the blame probe's handler raises its own words first)
    **{name: ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                               r"replaced a signal's handler$")
       for name in ("signal_pending_restore", "signal_pending_selfrestore",
                    "signal_pending_interrupt")},
    "signal_pending_sleep": ("TIMEOUT", r"^no answer within \d+ s$"),
    "signal_pending_blame": ("RUNTIME_ERROR",
                             r"^(RuntimeError: harness integrity: the harness's "
                             r"_restore_signals failed|CandidateError: harness integrity: "
                             r"candidate code replaced a signal's handler$)"),
    # ``random._urandom`` (which numpy's Philox reaches for its seed's entropy, inside the
    # reveal) rebound: ``random`` is on the message path, put back before the reveal
    **{name: ("COMPILE_ERROR",
              r"^harness integrity: candidate code replaced random\._urandom$")
       for name in ("reveal_urandom", "reveal_urandom_raise", "reveal_urandom_stall")},
    # a tensor of the worker's own (an input, a lent slot, an arena's private copy)
    # replaced by one with torch's Python dispatch key and ``__class__`` set back to
    # ``torch.Tensor``: its device or size read would run the candidate's dispatch; such
    # a tensor is refused before anything of it is read (the controls fill nothing)
    **{name: ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                               r"replaced a tensor of the worker's with one that carries a "
                               r"dispatch key no plain dense tensor has$")
       for name in ("keyed_input_device", "keyed_input_control", "keyed_input_stall",
                    "keyed_input_interrupt")},
    **{name: ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                               r"replaced Worker\.slots$")
       for name in ("keyed_slot_device", "keyed_slot_copy", "keyed_slot_late_fill")},
    **{name: ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                               r"replaced Worker\.arenas$")
       for name in ("keyed_arena_nbytes", "keyed_arena_control", "arena_dict_subclass")},
    # (the CUDA sources are not read on the CPU: the zeros are judged)
    "keyed_sources_device": ("INCORRECT_NUMERICAL", r"^first call: y: 8 of 8 elements"),
    # the worker's or its channel's namespace replaced by a dict's subclass, whose own
    # iteration and lookups would run at every read the harness makes of it
    **{name: ("COMPILE_ERROR", r"^harness integrity: candidate code replaced "
                               r"Worker\.__dict__$")
       for name in ("worker_dict_subclass", "worker_dict_hidden_shadow",
                    "worker_dict_checked_erase", "worker_dict_control")},
    "channel_dict_subclass": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                               r"replaced Channel\.__dict__$"),
    "opoverload_dict_subclass": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: "
                                                  r"candidate code replaced a kernel of "
                                                  r"aten::copy_$"),
    "output_dict_subclass": ("INCORRECT_NUMERICAL", r"^first call: y: 8 of 8 elements"),
    # the worker's marker (CUPTI's, read by the state check) replaced by a tensor with
    # torch's Python dispatch key: a CPU worker has none, and a CUDA one's must be plain
    **{name: ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                               r"replaced Worker\.marker$")
       for name in ("keyed_marker_device", "keyed_marker_sizes", "marker_control",
                    "marker_stall", "marker_interrupt", "marker_erase_integrity")},
    # an arena's words with a dtype whose fields make numpy call Python at the address
    # read; an arena's ints of a subclass: its words must be plain uint64, its parts exact
    **{name: ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                               r"replaced Worker\.arenas$")
       for name in ("arena_words_descr", "arena_seed_intsub")},
    "arena_words_control": ("INCORRECT_NUMERICAL",
                            r"^(first call|eager timing trial \d+): y: 8 of 8 elements"),
    # a torch function mode pushed by a finalizer the serve loop runs: taken off the stack
    # (and reported) at the loop's top, and refused before a trial's first torch operation
    "mode_finalizer_reveal": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                               r"candidate code replaced the torch function "
                                               r"or dispatch mode stack \(a mode left "
                                               r"active\)$"),
    "mode_finalizer_control": ("INCORRECT_NUMERICAL",
                               r"^(first call|eager timing trial \d+): y: 8 of 8 elements"),
    **{name: ("RUNTIME_ERROR", r"^harness integrity: candidate code replaced torch\.equal$")
       for name in ("mode_erase_integrity", "erase_integrity_control")},
    "kept_finalizer_reveal": ("RUNTIME_ERROR", TYPES_CHANGED),
    "lent_intsub": ("RUNTIME_ERROR", r"^CandidateError: harness integrity: candidate code "
                                     r"replaced Worker\.slots$"),
    "graph_fake_cpu": ("INCORRECT_NUMERICAL", r"^first call: y: 8 of 8 elements"),
    # the candidate's own words in a refusal of its own output or exception (its class's
    # name, its exception's name): the status is the candidate's failure
    "classname_format": ("RUNTIME_ERROR", r"^CandidateError: output 0 is "),
    "exc_name_strsub": ("RUNTIME_ERROR", r'^"DATA_ERROR'),
    # ``Worker.walls`` a list's subclass whose iteration the load reply's encoder runs:
    # honest work, no verdict moved
    "walls_listsub": ("PASSED", r"^$"),
    # a property planted on ``abc.ABCMeta`` over a name of an ABC class the put-back would
    # set or delete (the put-back looks the name up on the metaclass first): only classes
    # made by ``type`` itself are put back, so the trap never runs and the zeros are judged
    **{name: ("INCORRECT_NUMERICAL", r"^first call: y: 8 of 8 elements")
       for name in ("abcmeta_delattr_fill", "abcmeta_setattr_fill",
                    "abcmeta_control_unarmed")},
    # a finalizer on the outputs that replaces the unpickler's ``load`` where they are
    # freed, to rewrite the next ``checked`` request and erase its report: the tables are
    # put back after the loop's frees and pending handlers, and the change is reported
    "finalizer_receive_hook": ("RUNTIME_ERROR", TYPES_CHANGED),
    "guarded_rebind_control": ("RUNTIME_ERROR", r"^harness integrity: candidate code "
                                                r"replaced statistics\.median$"),
    # the calls rebind a guarded name, with honest outputs: the integrity check's report
    "control_guarded_rebind": ("RUNTIME_ERROR",
                               r"^harness integrity: candidate code replaced torch\.equal$"),
}
#: Candidates that skip a 20 ms sleep whenever they think they are timed (or get a cache
#: hit, or forge the worker's event time): their time must not drop below the sleep.
NO_SPEEDUP = ["slow_honest", "phase_by_stack", "phase_by_environment", "cache_by_fingerprint",
              "cache_by_content_hash", "forge_event_time", "precompute_staged", "spin_hog",
              "forge_under_guard", "frame_local_write",
              "xor_hook_precompute", "exit_teardown_across_freeze", "checks_off_claim_zero"]
#: The caps the workers of this module get (small, so exhausting them is quick).
LIMITS = {"HF_EVAL_WORKER_MEMORY": "1G", "HF_EVAL_WORKER_DISK": "64M",
          "HF_EVAL_WORKER_PIDS": "256"}
#: The SysV key tests/adversarial/sysv_shm leaves a segment under.
SYSV_KEY = 0x48464576
LEFTOVER = Path("/tmp/hf_eval_adversarial_leftover")


def _world_readable_root() -> Path:
    """A toy dataset (and cache) that the worker's uid could read by file permissions
    alone, so only the sandbox's walls can keep it out."""
    from tests.conftest import build_toy_root

    base = Path(tempfile.mkdtemp(prefix="hf_eval-adversarial-"))
    build_toy_root(base, call_timeout_s=10.0)
    for path in [base, *base.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0))
    return base


#: Candidates that are one template (tests/adversarial/<template>) with a path written in.
TEMPLATES = {"read_reference_cache": "read_file", "read_blob": "read_file",
             "read_workload_file": "read_file", "sysv_shm_again": "sysv_shm",
             "declare_passed_reply": "declare_status",
             "sig32_handler_on_channel": "signal_handler_on_channel",
             "sig33_handler_on_channel": "signal_handler_on_channel",
             "declare_data_error_reply": "declare_status",
             "declare_unknown_status_reply": "declare_status"}


def _candidate(name: str, tmp: Path, target: str | None = None,
               source: str | None = None) -> Solution:
    """A candidate from tests/adversarial; templated ones get ``target`` written in."""
    package = copy_candidate(HERE / (source or TEMPLATES.get(name, name)),
                             tmp / "candidates" / name)
    if target is not None:
        main = package / "main.py"
        main.write_text(main.read_text().replace("__TARGET__", target))
    return solution_from_directory(package / "main.py", DEFINITION)


def _uid_processes(uid: int) -> list[int]:
    """Live processes of ``uid`` (a zombie is dead: it waits only for its parent)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid and \
                        "\nState:\tZ" not in (entry / "status").read_text():
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def _describe(pid: int) -> str:
    """What a surviving process is (for the failure message)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError as exc:
        return f"gone ({exc})"
    keep = [line for line in status if line.split(":")[0] in ("State", "PPid", "Uid")]
    return f"{cmdline!r} {keep}"


@contextlib.contextmanager
def _holding(uids: set[int], timeout: float = 600.0):
    """Hold the machine-wide leases of ``uids`` (the lock files every audit takes before it
    starts a worker on a uid): while held, a process of one of them is a survivor of this
    audit, never a worker of another audit on the same machine."""
    handles = []
    try:
        for uid in sorted(uids):
            fh = open(workers.UID_LOCK_DIRECTORY / f"hf_eval-uid-{uid}.lock", "w")  # noqa: SIM115
            handles.append(fh)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:  # another audit's worker holds it: wait it out
                    assert time.monotonic() < deadline, f"uid {uid} stayed leased"
                    time.sleep(0.1)
        yield
    finally:
        for fh in handles:
            fh.close()


@pytest.fixture(scope="module")
def records() -> dict[str, dict]:
    """One audit of every CPU candidate on the toy's first workload, with the reference
    cache on (so the file a candidate tries to read exists)."""
    base = _world_readable_root()
    root = base / "ds"
    cache = base / "cache"
    old_cache = os.environ.get("HF_EVAL_CACHE")
    os.environ["HF_EVAL_CACHE"] = str(cache)
    server = socket.create_server(("127.0.0.1", 0))
    LEFTOVER.unlink(missing_ok=True)
    try:
        dataset = open_dataset(root)
        warm = base / "warm.jsonl"  # fills the reference cache
        Audit(dataset, AuditConfig(report=warm, suite="first", validation_only=True)).run()
        targets = {
            "read_reference_cache": str(next((cache / "references").rglob("*.safetensors"))),
            "read_blob": str(next((root / "blob").rglob("*.safetensors"))),
            "read_workload_file": str(root / "workloads/toy/toy_linear_n8_k16.jsonl"),
            "network": str(server.getsockname()[1]),
            "file_table_within_reach": str(1 << 30),  # LIMITS' memory cap, 1G
            "freeze_populate_stall": "40",  # GiB: seconds of walking on any machine
            "declare_passed_reply": "PASSED",
            "sig32_handler_on_channel": "32",
            "sig33_handler_on_channel": "33",
            "declare_data_error_reply": "DATA_ERROR",
            "declare_unknown_status_reply": "SKIPPED",
        }
        candidates = []
        for name in EXPECTED:  # each one followed by the honest solution on the same case
            candidates += [_candidate(name, base, targets.get(name)),
                           _candidate(f"honest-after-{name}", base, source="honest")]
        report = base / "report.jsonl"
        config = AuditConfig(report=report, solutions="none", extra_solutions=candidates,
                             suite="first")
        os.environ.update(LIMITS)
        try:
            audited = Audit(dataset, config).run()
        finally:
            for key in LIMITS:
                os.environ.pop(key, None)
        uids = {int(w.removeprefix("uid:")) for r in audited
                for w in r.model_dump().get("isolation", []) if w.startswith("uid:")}
        with _holding(uids):  # no other audit on this machine starts a worker on them
            survivors = [pid for uid in sorted(uids) for pid in _uid_processes(uid)]
            described = {pid: _describe(pid) for pid in survivors}
        sysv = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    finally:
        server.close()
        if old_cache is None:
            os.environ.pop("HF_EVAL_CACHE", None)
        else:
            os.environ["HF_EVAL_CACHE"] = old_cache
    out = {r.solution.removeprefix("candidate-"): r.model_dump(mode="json") for r in audited}
    out["__survivors__"] = {"pids": survivors, "described": described}
    out["__report__"] = {"lines": report.read_text().splitlines()}
    out["__sysv__"] = {"keys": [int(line.split()[0]) for line in sysv]}
    shutil.rmtree(base, ignore_errors=True)
    return out


def _statuses(expected: str | tuple[str, ...]) -> tuple[str, ...]:
    """The statuses an expectation accepts: one, or those a machine may give (a stall
    that only a slow enough machine shows; the reason's pattern covers each)."""
    return expected if isinstance(expected, tuple) else (expected,)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_candidate_verdict(records, name):
    status, pattern = EXPECTED[name]
    record = records[name]
    assert record["status"] in _statuses(status), record.get("reason")
    assert _reason_matches(pattern, record.get("reason", "")), record.get("reason")


def _reason_matches(pattern: str, reason: str) -> bool:
    """Whether ``reason`` matches, as it is or without the exception's class name that the
    worker puts before its report when a trial itself finds the tampering (the same report
    from the checks after a request has none)."""
    return bool(re.search(pattern, reason)
                or re.search(pattern, reason.removeprefix("CandidateError: ")))


def test_candidate_text_is_bounded(records):
    assert len(records["huge_error_text"]["reason"]) <= 4000


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_honest_solution_after_it_still_passes(records, name):
    record = records[f"honest-after-{name}"]
    assert record["status"] == "PASSED", record.get("reason")
    assert record["second_input_set"]["status"] == "PASSED"


def test_no_ipc_object_outlives_its_worker(records):
    """The segment tests/adversarial/sysv_shm left was in its worker's IPC namespace."""
    assert SYSV_KEY not in records["__sysv__"]["keys"]


def test_code_run_inside_the_integrity_check_forges_no_reply(records):
    """A candidate whose ``__getattr__`` on objects the check walks would rewrite the
    reply after every check passed (its trial's event time and phases set to 0.000123 ms):
    the check reads no attribute of them, so the record holds the worker's own figures."""
    record = records["enumprop_hook_forges_reply"]
    assert record["status"] == "PASSED"
    assert record["timing"] and "0.000123" not in json.dumps(record["timing"])


def _floor_lift(timing: dict) -> float:
    """How far the stand-in's floor stood above its cheapest run (ms, at most
    GUARD_MAX_MS): work a trial can hide beside the slack."""
    lift = max(p["stand_in_floor"] - p["stand_in_cheapest"] for p in timing["phases_ms"])
    assert 0 <= lift <= GUARD_MAX_MS, timing
    return lift


def _least_for_20ms(timing: dict) -> float:
    """The least a trial of 20 ms of work may count, by the guard's stated bound: less
    GUARD_REL, the record's slack and the floor's lift (50 us for the request's own
    jitter)."""
    slack = timing["guard_slack_ms"]
    assert GUARD_MIN_MS <= slack <= GUARD_MAX_MS, timing
    return (20.0 - slack - _floor_lift(timing)) / (1 + GUARD_REL) - 0.05


@pytest.mark.parametrize("name", NO_SPEEDUP)
def test_timing_cheats_gain_no_speedup(records, name):
    """The honest work takes 20 ms a call; a cheat that skipped it, or forged its time,
    would report ~0 ms, or 86% (what the guard's ratio let through before it was 5%).
    Every trial counts at least what the guard promises for 20 ms of work: less
    GUARD_REL, the trial's slack and its floor's height above the cheapest stand-in run,
    both at most GUARD_MAX_MS and read from the record (on a quiet host, 18.8 ms; a loaded
    host's stand-in spread widens the slack, and the 20 ms sleep then reads lower)."""
    timing = records[name]["timing"]["eager"]
    assert timing["trials"] - timing["extra_trials"] == 2 and timing["iters"] == 1
    assert timing["extra_trials"] <= GUARD_RETRIES["cpu"]
    least = _least_for_20ms(timing)
    assert min(timing["counted_trials_ms"]) >= least, (least, timing)
    assert timing["min_ms"] >= least and timing["median_ms"] >= least, (least, timing)


def test_forged_event_time_is_overruled_by_the_audits_clock(records):
    """A device time the host clock cannot confirm is flagged, and each trial counts at
    what its own host time implies (no trial confirms the claim)."""
    timing = records["forge_event_time"]["timing"]["eager"]
    assert timing["device_median_ms"] < 1.0  # what the worker claimed for 20 ms of work
    assert timing["host_median_ms"] >= 19.0 - _floor_lift(timing)  # what the audit saw
    assert timing["flagged"] == timing["trials"] >= 2
    for counted, host in zip(timing["counted_trials_ms"], timing["host_trials_ms"]):
        assert counted >= (host - 2.0) / 1.05 - 1e-6  # GUARD_MAX_MS, GUARD_REL
    assert timing["median_ms"] >= timing["host_implied_ms"]


def test_claims_forged_through_closed_routes_gain_nothing(records):
    """Candidates that compute honestly and forge a 1 us claim through a route now closed
    (the channel's ``restricted`` flag, read by the worker's send and receive; a finalizer
    in the serve loop's last result, run with the next reply in hand): their times are
    the honest solution's, not 0.001 ms. (Against the quickest trial of the honest solution
    in this run, after any candidate: a toy call takes about 0.15 ms, and on a loaded host
    every trial of one audit can take twice or three times it.)"""
    honest = min(record["timing"]["eager"]["min_ms"] for name, record in records.items()
                 if (name == "honest" or name.startswith("honest-after-"))
                 and record["status"] == "PASSED" and "eager" in record.get("timing", {}))
    for name in ("channel_flag_skip_trial", "channel_flag_forged_claim",
                 "finalizer_in_last_result"):
        timing = records[name]["timing"]["eager"]
        assert timing["median_ms"] >= 0.5 * honest and timing["min_ms"] >= 0.05, (
            name, timing, honest)


def test_checks_switched_off_hide_no_work(records):
    """20 ms of work a call with every check of the worker switched off and ~0 claimed:
    the audit's host time still holds all of the work (the checks run after the clock, in
    the stand-in's requests alike; run inside it, the stand-in's floor subtracted about a
    millisecond this candidate never paid), so the claim is overruled at what it implies."""
    timing = records["checks_off_claim_zero"]["timing"]["eager"]
    assert timing["flagged"] >= 2, timing  # (an added trial may claim its work honestly)
    assert min(timing["host_trials_ms"]) >= 19.7 - _floor_lift(timing), timing
    assert min(timing["counted_trials_ms"]) >= _least_for_20ms(timing), timing


def test_every_timed_call_got_fresh_content(records):
    record = records["honest"]
    # first call on the workload, each timed trial (2, and any the guard added), 1 second
    # input set
    assert record["content"]["fresh_sets"] == record["timing"]["eager"]["trials"] + 1
    assert re.fullmatch(r"[0-9a-f]{64}", record["content"]["secret_sha256"])
    assert record["second_input_set"] == {"status": "PASSED", "changed": True}


def test_nothing_outlives_the_workers(records):
    assert records["__survivors__"]["pids"] == [], records["__survivors__"]
    assert not LEFTOVER.exists()


def test_workers_ran_behind_the_walls(records):
    walls = records["honest"]["isolation"]
    assert any(w.startswith("landlock-abi") for w in walls), walls
    assert "no_new_privs" in walls
    if os.geteuid() == 0:
        for wall in ("netns", "pidns", "ipcns", "mountns", "tmpfs-private", "cgroup"):
            assert wall in walls, walls
        uid = int(next(w for w in walls if w.startswith("uid:")).removeprefix("uid:"))
        assert WORKER_UID_BASE <= uid < WORKER_UID_BASE + 900, walls


def test_the_walls_recorded_are_those_the_worker_named_before_any_candidate_code(records):
    honest = [w for w in records["honest"]["isolation"] if not w.startswith("uid:")]
    forged = records["forge_isolation_walls"]["isolation"]
    assert "no-sandbox" not in forged and "audited-by-hand" not in forged, forged
    assert [w for w in forged if not w.startswith("uid:")] == honest, forged


def test_report_has_one_line_per_candidate(records):
    lines = records["__report__"]["lines"]
    assert len(lines) == 2 * len(EXPECTED)
    assert {json.loads(line)["status"] for line in lines} <= {s.value for s in Status}


def test_hardcoded_scale_passes_normally_and_fails_the_scale_probe(tmp_path):
    from tests.conftest import build_toy_root

    root = build_toy_root(tmp_path)
    candidate = _candidate("hardcoded_scale", tmp_path)
    results = {}
    for probe in (False, True):
        report = tmp_path / f"probe-{probe}.jsonl"
        results[probe] = Audit(open_dataset(root), AuditConfig(
            report=report, solutions="none", extra_solutions=[candidate], suite="first",
            validation_only=True, scale_probe=probe)).run()[0]
    assert results[False].status is Status.PASSED
    assert results[True].status is Status.INCORRECT_NUMERICAL
    assert results[True].reason.startswith("scale probe: y: ")


def test_a_case_that_answers_each_request_just_before_its_deadline_times_out(tmp_path):
    """Four calls of 0.85 x the call timeout: none late, together past the case's budget
    (three call timeouts). The honest solution audited next on the same case passes."""
    from hf_eval.judge.trials import CASE_BUDGET_FACTOR
    from tests.conftest import build_toy_root

    timeout = 2.0
    root = build_toy_root(tmp_path, call_timeout_s=timeout)
    candidates = [_candidate("stall_every_request", tmp_path, str(timeout)),
                  _candidate("honest-after-stall", tmp_path, source="honest")]
    stalled, honest = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", extra_solutions=candidates,
        suite="first")).run()
    assert stalled.status is Status.TIMEOUT, stalled.reason
    assert stalled.reason == (
        "the case's requests to the worker, and the waits for its processes to stop, took "
        f"more than {CASE_BUDGET_FACTOR * timeout:.0f} s in all ({CASE_BUDGET_FACTOR} times "
        "the task's call timeout)")
    assert honest.status is Status.PASSED, honest.reason


def _new_workers(monkeypatch) -> list[str]:
    """The names of the solutions each new candidate worker is started for, as they
    start."""
    started = []
    new_handle = workers.Isolation._new_handle

    def counted(self, solution):
        started.append(solution.name)
        return new_handle(self, solution)

    monkeypatch.setattr(workers.Isolation, "_new_handle", counted)
    return started


def test_a_worker_serves_the_next_workload_while_it_was_lent_little(tmp_path, monkeypatch):
    """The memory the audit lent a worker (its pages charged to the audit) could be kept
    alive by it past a workload, out of sight: a worker serves the next workload only
    while what it was lent for earlier ones is at most ``HF_EVAL_WORKER_KEPT_LENT``,
    else a new worker does, and the user is told once. Verdicts are unchanged."""
    from tests.conftest import build_toy_root

    root = build_toy_root(tmp_path)
    started = _new_workers(monkeypatch)
    for bound, expected in (("1G", 1), ("0", 3)):
        monkeypatch.setenv("HF_EVAL_WORKER_KEPT_LENT", bound)
        started.clear()
        audit = Audit(open_dataset(root), AuditConfig(
            report=tmp_path / f"{bound}.jsonl", solutions="none", suite="all",
            extra_solutions=[_candidate("honest", tmp_path / bound)]))
        records = audit.run()
        assert [r.status for r in records] == [Status.PASSED] * 3, [r.reason for r in records]
        assert started == ["candidate-honest"] * expected, started
        renewed = [n for n in audit.notes if "is replaced before a workload" in n]
        assert len(renewed) == (expected > 1), audit.notes
    assert re.fullmatch(r"the worker of candidate-honest is replaced before a workload once the "
                        r"memory lent to it for earlier ones passes 0 MiB \(here [0-9]+ MiB; "
                        r"HF_EVAL_WORKER_KEPT_LENT\)", renewed[0]), renewed


def test_a_load_after_the_candidates_own_failure_counts_against_the_next_case(tmp_path):
    """A worker the candidate's crash ended is loaded again for the next workload: that
    load (2 s of import here) counts against the workload's budget (3 s), which its
    0.4 s calls then pass. The first load is the solution's setup, and never counted."""
    from hf_eval.judge.trials import CASE_BUDGET_FACTOR
    from tests.conftest import build_toy_root

    timeout = 1.0
    root = build_toy_root(tmp_path, call_timeout_s=timeout)
    audited = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", suite="all",
        extra_solutions=[_candidate("crash_then_slow_reload", tmp_path, "2.0"),
                         _candidate("honest-after", tmp_path, source="honest")])).run()
    records = [r for r in audited if r.solution == "candidate-crash_then_slow_reload"]
    honest = [r for r in audited if r.solution == "candidate-honest-after"]
    assert [r.status for r in honest] == [Status.PASSED] * 3, [r.reason for r in honest]
    assert [r.status for r in records] == [Status.RUNTIME_ERROR] + [Status.TIMEOUT] * 2, \
        [r.reason for r in records]
    for record in records[1:]:
        assert re.fullmatch(
            r"the case's requests to the worker, and the waits for its processes to stop, "
            rf"took more than {CASE_BUDGET_FACTOR * timeout:.0f} s in all "
            rf"\({CASE_BUDGET_FACTOR} times the task's call timeout\), 2\.[0-9] s of them "
            r"reloading the worker", record.reason), record.reason


def test_a_load_the_audit_caused_counts_against_no_case(tmp_path, monkeypatch):
    """Loads the audit causes (a new worker for each workload, here by the lent-memory
    bound) are not the candidate's doing: a 3.5 s import beside a 3 s budget passes
    every workload. After the candidate's own failure, a load has at most the case's
    budget."""
    from tests.conftest import build_toy_root

    monkeypatch.setenv("HF_EVAL_WORKER_KEPT_LENT", "0")
    root = build_toy_root(tmp_path, call_timeout_s=1.0)
    records = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "r.jsonl", solutions="none", suite="all",
        extra_solutions=[_candidate("slow_import", tmp_path, "3.5")])).run()
    assert [r.status for r in records] == [Status.PASSED] * 3, [r.reason for r in records]
    crashed = Audit(open_dataset(root), AuditConfig(
        report=tmp_path / "c.jsonl", solutions="none", suite="all",
        extra_solutions=[_candidate("crash_then_slow_reload", tmp_path / "c", "3.5")])).run()
    assert [r.status for r in crashed] == [Status.RUNTIME_ERROR] + [Status.TIMEOUT] * 2
    assert [r.reason for r in crashed[1:]] == ["no answer within 3 s"] * 2


def test_a_candidates_failure_is_forgotten_when_its_workers_are_ended():
    """The mark that makes a solution's next load count against its case lasts until
    the isolation ends its workers (another definition; every ``hf-eval serve``
    request starts so): another client posting the same sources to make them fail
    leaves nothing behind for the owner's next request."""
    iso = workers.Isolation(torch.device("cpu"))
    iso.discard("a-solution-hash", failed=True)
    assert iso.failed == {"a-solution-hash"}
    iso.shutdown()
    assert iso.failed == set()


def test_the_command_line_prints_what_the_run_noted(tmp_path, monkeypatch):
    """A note the run itself adds (here, the worker replaced before a workload) reaches
    the user of ``hf-eval audit``, after the cases, on stderr."""
    from tests.cli_kit import hf_eval, no_traceback
    from tests.conftest import build_toy_root

    monkeypatch.setenv("HF_EVAL_WORKER_KEPT_LENT", "0")
    root = build_toy_root(tmp_path)
    package = copy_candidate(HERE / "honest", tmp_path / "honest")
    done = hf_eval("--root", root, "audit", "--candidate", package / "main.py", "--suite",
                   "all", "--definitions", DEFINITION, "--solutions", "none", "--report",
                   tmp_path / "r.jsonl")
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^note: the worker of candidate-\S+ is replaced before a workload once",
                     done.stderr, re.M), done.stderr


def test_source_path_escaping_the_package_is_refused(tmp_path):
    (tmp_path / "outside.py").write_text("def run(*a):\n    pass\n")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "main.py").write_text("from helper import run\n")
    (package / "helper.py").symlink_to(tmp_path / "outside.py")
    with pytest.raises(DataError, match="helper.py: candidate source is a link"):
        solution_from_directory(package / "main.py", DEFINITION)
    data = json.loads(json.dumps({
        "name": "s", "definition": DEFINITION, "author": "a",
        "spec": {"language": "python", "target_hardware": ["cpu"],
                 "entry_point": "main.py::run", "destination_passing_style": False},
        "sources": [{"path": "main.py", "content": "x"}, {"path": "../evil.py", "content": "x"}]}))
    with pytest.raises(DataError, match="stay inside the package"):
        parse(Solution, data, "solutions/x.json")


CUDA_EXPECTED = {
    "honest_cuda_sleep": ("PASSED", r"^$"),
    # the flush reads a buffer allocated for it; the handler table cannot be changed
    "cuda_skip_l2_flush": ("PASSED", r"^$"),
    # its handler-table patch finds no table: the candidate's own error
    "cuda_fake_profiler": ("RUNTIME_ERROR", r"^StopIteration"),
    # the flush's size comes with the request: the replaced lookup is never consulted
    "cuda_l2_props_shrink": ("PASSED", r"^$"),
    "cuda_detect_profiled_trial": ("PASSED", r"^$"),
    "cuda_gpu_work_across_freeze": ("PASSED", r"^$"),
    # the stand-in waits until the queue it left has drained: its floor stays its own; the
    # 400 ms it leaves after every reply runs past the session's drain allowance (2 s)
    # once five trials have replied, and the candidate is ended (as on the H100)
    "cuda_gpu_queue_floor_inflation": (("RUNTIME_ERROR", "PASSED"),
                                       r"^(the candidate's device work kept the GPU busy "
                                       r"for 2 s in all after its replies \(while its "
                                       r"group was frozen and the stand-in waited\))?$"),
    "cuda_lead_window_side_stream": ("PASSED", r"^$"),
    "side_stream_wait": ("PASSED", r"^$"),
    "side_stream": ("PASSED", r"^$"),
    # eager calls are honest; every captured call returns the same buffers
    "capture_only": ("RUNTIME_ERROR",
                     r"^CandidateError: output 0 aliases an output of another call"),
    # the gate's word pre-set far ahead: the first gated trial counts its launch (slower)
    "cuda_gate_word_preopen": ("PASSED", r"^$"),
    # CUPTI stopped in the profiled trial: the read fails, the guard still bounds the rest
    "cuda_cupti_read_error": ("PASSED", r"^$"),
    # a long sleep kernel of its own before the harness's lead: CUPTI's window still opens
    # at the earliest lead end, and sees it
    "cuda_cupti_window_narrow": ("PASSED", r"^$"),
    # thousands of graph nodes a call behind the closed gate: never stuck
    "cuda_graph_launch_deadlock": ("PASSED", r"^$"),
    # device work queued after its replies: the stand-in waits at most 2 s in a session
    # (PASSED on two H100 runs: the audit's check that the GPU is free may not see another
    # context's running kernel, results/h100/2026-12-05-h100-boundary-floor/; either way
    # the floor-inflation candidate below gains nothing)
    "cuda_gpu_drain_after_reply": (("RUNTIME_ERROR", "PASSED"), r"^(the candidate's device "
                                   r"work kept the GPU busy for 2 s in all after its "
                                   r"replies|$)"),
    # the end marker swapped for a float tensor: the worker's state check types it
    "cuda_cupti_marker_swap": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                               r"candidate code replaced Worker\.marker$"),
    # the last call leaves a side stream current: the events stay on the timed stream
    "cuda_stream_left_switched": ("RUNTIME_ERROR", r"^(CandidateError: )?a call left another "
                                  r"CUDA stream current$"),
    # the end marker moved to the CPU: its device is checked too
    "cuda_cupti_marker_on_cpu": ("RUNTIME_ERROR", r"^(CandidateError: )?harness integrity: "
                                 r"candidate code replaced Worker\.marker$"),
    # the gate's value set near the end of its 32-bit range at import
    "cuda_gate_value_overflow": ("COMPILE_ERROR", r"^harness integrity: candidate code "
                                 r"replaced Worker\.gate$"),
}


@pytest.fixture(scope="module")
def cuda_records(tmp_path_factory) -> dict[str, dict]:
    from tests.conftest import build_toy_root

    tmp = tmp_path_factory.mktemp("adversarial-cuda")
    root = build_toy_root(tmp, call_timeout_s=60.0)
    candidates = [_candidate(n, tmp) for n in CUDA_EXPECTED]
    audited = Audit(open_dataset(root), AuditConfig(
        report=tmp / "cuda.jsonl", solutions="none", extra_solutions=candidates,
        suite="first", devices=["cuda"])).run()
    return {r.solution.removeprefix("candidate-"): r.model_dump(mode="json") for r in audited}


needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@needs_cuda
def test_side_stream_work_is_counted(cuda_records):
    """The same ~1 ms of device work on a side stream is not faster than on the current."""
    honest = cuda_records["honest_cuda_sleep"]["timing"]
    cheat = reported_time(cuda_records["side_stream_wait"])[1]
    assert cheat >= 0.8 * reported_time(cuda_records["honest_cuda_sleep"])[1], (cheat, honest)
    assert cheat >= 0.5  # 2e6 sleep cycles at ~2 GHz


@needs_cuda
@pytest.mark.parametrize("name, share", [
    ("cuda_gpu_work_across_freeze", 0.8),
    # all of the call's sleep on a side stream, the floor raised meanwhile: the host
    # clock still sees the sleep
    ("cuda_gpu_queue_floor_inflation", 0.8),
    # 35% of the sleep on a side stream runs beside the other 65%: the device is busy
    # for 65% of the honest time, never less
    ("cuda_detect_profiled_trial", 0.6),
    # the same split, CUPTI's read made to fail in the profiled trial
    ("cuda_cupti_read_error", 0.6)])
def test_cuda_timing_cheats_gain_no_speedup(cuda_records, name, share):
    honest = cuda_records["honest_cuda_sleep"]["timing"]["cold"]["median_ms"]
    record = cuda_records[name]
    if record["status"] != "PASSED":  # ended before a time was taken: none to gain
        assert record["status"] == "RUNTIME_ERROR" and not record["timing"], record
        return
    timing = record["timing"]
    assert timing["cold"]["median_ms"] >= share * honest, (timing, honest)


@needs_cuda
def test_a_candidates_own_lead_kernel_does_not_hide_its_side_stream_from_cupti(cuda_records):
    """A 0.1 s sleep kernel of the candidate's, started before the harness's lead in the
    profiled trial: CUPTI's window opens at the earliest lead end, so it is seen off the
    timed stream and every trial counts at least its span."""
    timing = cuda_records["cuda_cupti_window_narrow"]["timing"]
    seen = [m for m in timing.values()
            if isinstance(m, dict) and m.get("cupti", {}).get("off_stream")]
    assert seen and all(m["clock"] == "cupti-span" for m in seen), timing


@needs_cuda
@pytest.mark.parametrize("name", sorted(CUDA_EXPECTED))
def test_cuda_candidate_verdict(cuda_records, name):
    status, pattern = CUDA_EXPECTED[name]
    record = cuda_records[name]
    assert record["status"] in _statuses(status), record.get("reason")
    assert re.search(pattern, record.get("reason", "")), record.get("reason")


@needs_cuda
def test_cuda_times_are_the_devices_guarded_by_the_host(cuda_records):
    """An honest kernel on the timed stream: its events are its time (CUPTI, in the
    profiled trial, finds no device work off that stream), never lowered by the guard."""
    timing = cuda_records["honest_cuda_sleep"]["timing"]
    for method in ("graph", "cold"):
        assert timing[method]["clock"] == "cuda-events", timing[method]
        # a replay's events start behind the launch gate, not after a fixed lead
        assert [p["candidate_gated"] for p in timing[method]["phases_ms"]] \
            == [True] * timing[method]["trials"], timing[method]
        assert timing[method]["cupti"]["off_stream"] is False, timing[method]
        assert timing[method]["cupti"]["activities_per_call"] >= 1, timing[method]
        assert timing[method]["median_ms"] >= timing[method]["device_median_ms"]
    assert timing["cold"]["l2"] == "flushed" and timing["graph"]["l2"] == "as revealed"


@pytest.mark.parametrize("make, rule", [
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: p.write_bytes(b"x = '\xff\xfe'\n"), "not UTF-8 text"),
    (lambda p: p.write_bytes(b"x = 1\n\x00\n"), r"candidate source holds a NUL byte \(at "
                                                 r"character 6\): not source text$"),
])
def test_a_candidate_source_that_cannot_be_read_is_refused(tmp_path, make, rule):
    """A FIFO beside main.py would block the audit's read for ever; bytes that are not
    UTF-8 would end it with a traceback: both are one error naming the file."""
    package = tmp_path / "pkg"
    shutil.copytree(HERE / "honest", package)
    make(package / "helper.py")
    with pytest.raises(DataError, match=rule) as caught:
        solution_from_directory(package / "main.py", DEFINITION)
    assert "helper.py" in str(caught.value)


def test_a_candidate_folder_is_bounded_before_it_is_read(tmp_path):
    """Sparse files cost no disk and read as text: a folder of them would make the audit
    hold gigabytes of load requests. The package's size is summed from the files' sizes
    before any is read; the same bound holds for a Solution however it arrives."""
    package = tmp_path / "pkg"
    shutil.copytree(HERE / "honest", package)
    with open(package / "pad.py", "wb") as fh:
        fh.truncate(17 << 20)  # 17 MiB of holes: NUL bytes, never read
    with pytest.raises(DataError, match=r"pad.py: candidate sources are over the "
                       r"package's limit of 16 MiB or 1000 files$"):
        solution_from_directory(package / "main.py", DEFINITION)
    many = [{"path": f"m{i}.py", "content": "x = 1\n"} for i in range(1001)]
    too_large = [{"path": "main.py", "content": "#" * (16 << 20)},
                 {"path": "b.py", "content": "x = 1\n"}]
    base = solution_json("x", "x = 1\n")
    for sources, rule in ((many, "sources: 1001 files, over the limit of 1000"),
                          (too_large, f"sources: {(16 << 20) + 6} bytes in all, over the "
                                      "limit of 16777216 \\(16 MiB\\)"),
                          ([{"path": "main.py", "content": "a\x00"}],
                           "holds a NUL byte \\(at character 1\\)")):
        with pytest.raises(DataError, match=rule):
            parse(Solution, {**base, "sources": sources}, "solution.json")


def test_a_candidate_folder_is_read_without_following_links(tmp_path):
    """A folder swapped for a link while a root audit packages it (a racer of the
    author's) cannot redirect a read: the folder is opened from the root one component
    at a time without following a link, walked through descriptors, and a linked folder
    inside it is not walked. A linked file inside it is refused."""
    from hf_eval.data.sources import _open_dir

    (tmp_path / "secret").mkdir()
    (tmp_path / "secret/x.py").write_text("TOKEN = 1\n")
    (tmp_path / "swapped").symlink_to(tmp_path / "secret")  # as the racer leaves it
    with pytest.raises(OSError):
        _open_dir(tmp_path / "swapped")
    package = tmp_path / "pkg"
    shutil.copytree(HERE / "honest", package)
    (package / "sub").symlink_to(tmp_path / "secret")
    solution = solution_from_directory(package / "main.py", DEFINITION)
    assert [s.path for s in solution.sources] == ["main.py"]
    (package / "helper.py").write_text("K = 1\n")
    (package / "alias.py").symlink_to(package / "helper.py")
    with pytest.raises(DataError, match=r"alias.py: candidate source is a link \(links "
                       r"are not followed: copy the file into the folder\)$"):
        solution_from_directory(package / "main.py", DEFINITION)


def test_a_candidate_folder_is_named_in_ascii_and_nests_a_bounded_depth(tmp_path):
    """The folder names the solution in every record: no look-alike letters, no markup.
    A tree nested without end is one error, not a traceback."""
    package = tmp_path / "f\u043eo"  # a Cyrillic o
    shutil.copytree(HERE / "honest", package)
    with pytest.raises(DataError, match=r"candidate folder name must be ASCII letters, "
                       r"digits, '_', '.' or '-'"):
        solution_from_directory(package / "main.py", DEFINITION)
    package = tmp_path / "deep"
    shutil.copytree(HERE / "honest", package)
    (package / ("d/" * 40)).mkdir(parents=True)
    with pytest.raises(DataError, match=r"candidate folder nests deeper than 16 folders or "
                       r"holds more than 1000$"):
        solution_from_directory(package / "main.py", DEFINITION)


def test_a_candidate_folder_holds_its_owners_files_only(tmp_path):
    """A root audit packages the author's own files only: a folder others can write in
    (a shared one such as /tmp, where other users leave files) is refused, and so is a
    file or folder of another owner."""
    package = tmp_path / "pkg"
    shutil.copytree(HERE / "honest", package)
    package.chmod(0o1777)
    with pytest.raises(DataError, match=r"pkg: candidate folder is writable by others "
                       r"\(group or world\): package from a folder only you can write$"):
        solution_from_directory(package / "main.py", DEFINITION)
    package.chmod(0o755)
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    (package / "theirs.py").write_text("SECRET = 1\n")
    os.chown(package / "theirs.py", 65534, 65534)
    with pytest.raises(DataError, match=r"theirs.py: candidate source is owned by uid 65534, "
                       rf"not by the folder's owner \(uid {os.geteuid()}\)"):
        solution_from_directory(package / "main.py", DEFINITION)


def test_a_candidate_folder_packages_its_own_sources_only(tmp_path):
    """A virtual environment or a git folder beside main.py is not packaged; an empty
    file is, as one newline (a module that ``import`` must find: the schema wants
    content); an empty entry file is one error naming it."""
    package = tmp_path / "pkg"
    shutil.copytree(HERE / "honest", package)
    (package / "__init__.py").write_text("")
    (package / "empty.py").write_text("")
    for hidden in (".venv/lib/python3.11/site-packages/x.py", ".git/hooks/y.py",
                   "__pycache__/z.py"):
        (package / hidden).parent.mkdir(parents=True, exist_ok=True)
        (package / hidden).write_text("x = 1\n")
    (package / "helpers").mkdir()
    (package / "helpers/util.py").write_text("K = 2\n")
    solution = solution_from_directory(package / "main.py", DEFINITION)
    assert {s.path: s.content for s in solution.sources if s.path != "main.py"} == {
        "__init__.py": "\n", "empty.py": "\n", "helpers/util.py": "K = 2\n"}
    (package / "main.py").write_text("")
    with pytest.raises(DataError, match=r"main.py: candidate entry file is empty"):
        solution_from_directory(package / "main.py", DEFINITION)
