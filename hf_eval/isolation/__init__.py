"""The trust boundary: where candidate code runs, and everything that crosses back.

**The principle.** The worker is untrusted, and its only product is output bytes. It
runs the candidate in a process of its own, and whatever it says is a claim the audit
may refuse. Every status in a record is the audit's: PASSED only from its own
comparison of the output bytes with its own truth, DATA_ERROR only from its own data
checks; anything the worker reports is, at most, a candidate failure.

**The interface.** :class:`~hf_eval.isolation.workers.Isolation` gives a lane one
:class:`~hf_eval.isolation.workers.WorkerHandle` per solution (at most one candidate's
worker alive at a time), whose :meth:`~hf_eval.isolation.workers.WorkerHandle.request`
returns a checked :class:`~hf_eval.isolation.protocol.Reply` or raises
:class:`~hf_eval.isolation.workers.WorkerFailure` with the audit's status.

**Every channel from worker to audit, its defence, and the test that holds it**
(``adversarial/X`` is ``tests/adversarial/X``, audited in ``tests/test_adversarial.py``
and followed there by the honest solution on the same case):

==================  ==========================================  ===========================
channel             defence                                     tests
==================  ==========================================  ===========================
messages            a reply is plain data (no class, no         adversarial/forge_result,
                    descriptor, at most 1 MiB), carries the     declare_status (x3),
                    request's nonce, and is checked field by    declare_passed,
                    field (:mod:`.protocol`); it names no       flood_channel,
                    status. Anything else is tampering          reply_with_descriptor,
                    (RUNTIME_ERROR) and ends the worker. In     reply_json_amplify;
                    the worker, messages go through the socket  tests/test_channel.py;
                    the serve loop held before candidate code   proxy_drop_unmask_nothread,
                    (its type's own methods, names bound at     reqrewrite_copy_skip,
                    import; a request holds plain data only);   oldrequest_del,
                    a message's objects are freed between       reply_del_copy_skip,
                    messages, a trial reads its fields before   finalizer_reply_proxy,
                    candidate code, and the descriptor must     channel_descriptor_relay
                    stay the same file.
deadlines           one deadline for a whole request: sending,  adversarial/hang,
                    the header, partial frames and the body     stall_mid_message,
                    (:mod:`.channel`); no read waits past it,   channel_urgent_byte;
                    urgent data is tampering. Missed: TIMEOUT.  test_channel.py
memory              the audit lends sealed memfds only          adversarial/alias_input,
                    (:mod:`.memory`): inputs, arenas and        mutate_then_undo,
                    staged outputs read-only to the worker      write_input_proc_mem,
                    (no write, no writable map, no resize);     truncate_lent_buffers,
                    output slots writable but never resizable.  remap_input_writable,
                    The audit keeps private copies for its      outputs_short_row,
                    truths, byte checks and fresh sets, draws   cfunc_torch_equal_mutate;
                    every judged set's truth before the call,   test_channel.py
                    and judges a private copy of each slot. On  clobber_inputs_restore_
                    CPU a trial's unmasked inputs live in a     after_reply,
                    writable memfd the audit lent: its bytes    slot_self_copy
                    at secret positions are copied inside the
                    clock, and it is read whole after the
                    trial. No output may lie in a slot.
fds                 the worker is given its socket, its log     adversarial/
                    and the memfds above; it gives none back    reply_with_descriptor
                    (a reply with a descriptor is refused).
files               Landlock: read the interpreter and the      adversarial/read_file (x3),
                    harness, write only a private tmpfs (size-  leave_file,
                    capped, in its own mount namespace, gone    fill_private_dir,
                    with it, 65,536 files at most); the         sysfs_btf_mapping,
                    dataset and caches unseen;                  tmpfs_inodes_vma_names,
                    ``/sys`` less the kernel's BTF; no          pressure_mseal_uclamp
                    ``/proc/pressure``.
signals             Landlock scope, another uid, PID            adversarial/
                    namespace: the worker can signal only its   signal_everything,
                    own processes.                              read_parent_memory
processes           PID namespace whose first process is the    adversarial/leave_process,
                    candidate's: when it ends, the kernel ends  leader_exit_child,
                    every process in it (:mod:`.process`);      fork_chain, fork_bomb;
                    cgroup (``pids.max``) caps forks; the       tests/test_newcomer.py
                    group is frozen and emptied, the uid        (an audit interrupted or
                    reaped, on every end; a killed audit's      killed)
                    spawner kills its workers and their groups.
kernel state        seccomp refuses what allocates kernel       adversarial/netlink_socket_
                    memory no cgroup charges or fills a         buffers, socket_option_
                    host-wide limit (socket kinds and options,  memory, perf_events_and_
                    perf events, AIO, own filters, ACLs, NUMA   reuseport, seccomp_stack_
                    policies, secret memory, page merging,      and_aio, socket_kinds_and_
                    timers) or acts on the host's page cache    dnotify, xattr_numa_
                    and disks (``sync``, ``fadvise``); 1,024    secretmem, file_table_
                    descriptors a process; no core dump, not    within_reach, timer_sources,
                    even piped; the host's open-file table is   core_descriptors_merging,
                    raised above every group's reach            host_cache_and_writeback
                    (:mod:`.limits`).
IPC                 IPC namespace per worker (SysV, POSIX       adversarial/sysv_shm,
                    queues); a private tmpfs ``/dev/shm``;      sysv_shm_again;
                    no network (netns, Landlock TCP).           adversarial/network
memory use          cgroup ``memory.limit_in_bytes``: an OOM    adversarial/exhaust_memory
                    kills the worker only, reported as "out
                    of memory".
CPU and GPU time    at most one candidate's worker alive per    adversarial/spin_hog;
                    lane (the last one is ended before the      tests/test_isolation.py
                    next starts); its group is frozen while
                    the stand-in is timed; every trial ends
                    with a device-wide synchronise inside the
                    clocked request (:mod:`hf_eval.judge.trials`);
                    a verdict on CUDA, and every truth, holds
                    the GPU's lock (:func:`.workers.gpu_lock`);
                    a GPU left busy is the candidate's only if
                    ending its worker frees it.
one worker, one     a new solution gets a worker that served    tests/test_isolation.py
candidate           nothing: a new fork, or the lane's spare    (spare tests),
                    (forked between requests, device and        tests/test_serve.py
                    CUPTI started by ``warm``, which runs no
                    candidate code), taken once and never
                    offered again; ended with its solution.
time claims         the worker's device time (CUDA events; a    adversarial/forge_event_time,
                    CPU clock) and CUPTI summary are claims:    forge_huge_event_time,
                    bounded in the protocol, checked by the     side_stream_wait,
                    audit's own clock of the whole request      checks_off_claim_zero;
                    less a stand-in's cost; a trial the host    tests/test_timing_guard.py
                    clock does not confirm counts at host time
                    (:class:`hf_eval.judge.trials.TrialTime`).  tests/test_isolation.py
                    The stand-in's cost holds only what every
                    request pays: the worker's own checks of a
                    trial run after its reply, off the clock
                    (``checked``), in both workers. A graph     gate_object_swap,
                    trial's events start behind a launch gate   cuda_gate_word_preopen,
                    the worker opens once the replay is         cuda_graph_launch_deadlock,
                    launched (:class:`.server.LaunchGate`: no   cuda_cupti_window_narrow,
                    thread started in a trial; a watchdog       cuda_cupti_read_error,
                    started before candidate code opens it      cuda_cupti_marker_swap,
                    after 50 ms); CUPTI's window opens at the   cuda_cupti_marker_on_cpu,
                    earliest lead end, before the gate. The     cuda_stream_left_switched,
                    reply's ``gated`` is a diagnostic.          cuda_gpu_drain_after_reply
the harness in      every harness module global and class is    adversarial/patch_timer,
the worker          snapshotted before candidate code runs and  patch_torch,
                    compared after every request (names added   rebind_harness_global,
                    too), and so are the worker's containers    shadow_builtin_in_harness,
                    and slots (exact types, slots where the     slots_iter_bypass,
                    audit lent them, the record of them the one shadow_channel_send,
                    the serve loop saw lent), no audit hook but slot_list_swap_direct,
                    the worker's own (which vetoes any other,   lent_rewrite,
                    any change of a harness function's code     audit_hook_slot_swap,
                    or defaults, and every profile, trace and   trampoline_serve_locals,
                    monitoring function), its and its channel's veto_code_swap,
                    class and methods (none shadowed on the     dataclass_method_code_swap,
                    instance), no collector callback (in the    meta_slots,
                    interpreter's own list) or torch mode left  class_swap_worker,
                    set, no signal handler of the candidate's   profile_hook_toctou,
                    while a message is handled (each put back   sigio_profile,
                    as it was), the message path's names and    dumps_hide_integrity,
                    the worker's classes put back before each   json_encoder_cls,
                    receive and send and after a trial's        rebound_after_calls_a,
                    calls, the kernels of the operators a       library_sum_flush,
                    trial runs compared with those found        pydispatch_copy,
                    (Python ones too); recv and send are bound  gc_callback_slot_swap,
                    before candidate code, the output path      gc_hidden_callback_toctou,
                    calls and reads through its defaults and    c_profile_hook_slot_swap,
                    the C                                       class_collect_self_restoring,
                    accessors, no module loaded before the      tensor_property_in_checked,
                    candidate may change class, the L2 flush's  torch_module_class_in_
                    size comes with the request, an arena's     checked, cuda_l2_props_shrink,
                    parts and a set's inputs are read only as   arena_private_subclass,
                    the plain tensors made (exact classes,      input_subclass_alias
                    where they lay when registered). A
                    tripwire: candidate code that writes the
                    process's memory (``ctypes``) switches it
                    off, so nothing the worker says is
                    trusted; what still rests on it on CUDA is
                    in ``docs/verdicts.md`` ("What remains").
terminal            candidate text is printed with control      tests/test_report.py
                    characters escaped (``report.safe_text``).
==================  ==========================================  ===========================

Modules: :mod:`.workers` (the audit's side), :mod:`.spawner` (forks workers from a
process that imported torch once), :mod:`.process` (the worker's two processes),
:mod:`.walls` (Landlock, namespaces, uid), :mod:`.limits` (cgroups), :mod:`.channel`,
:mod:`.memory`, :mod:`.protocol`, :mod:`.server` (what the worker serves),
:mod:`.reveal` (masked arenas). ``docs/verdicts.md`` says why each step is there.
"""
