"""The worker's OS walls (hf_eval.isolation.walls), each proved on a real confined subprocess.

Every wall test runs ``python -c`` that calls ``confine`` and then attempts the forbidden
thing, printing ``DENIED <what> <exception>`` or ``LEAK <what>``; the test asserts both the
absence of every ``LEAK`` and the exact denial, and where it matters a control run (the
same attempt before ``confine``, or in an unconfined process) shows the attempt would
otherwise succeed, so a missing wall fails the test instead of passing vacuously.

Tests parametrised over ``uid`` run once with only Landlock and friends (``uid=None``,
which as root shows Landlock alone holds even though DAC would let root through) and once
with the per-lane uid drop (root only; skipped otherwise).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

if sys.platform != "linux":
    pytest.skip("the sandbox is Linux-only (Landlock)", allow_module_level=True)

from hf_eval.isolation import walls as sandbox  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ROOT = os.geteuid() == 0
# Lanes far above any the audit uses, so reap() here never touches a real worker.
TEST_LANE = 900
LANDLOCK_MISSING = ("Landlock is not available on this kernel: the project requires it on "
                    "CI and on the GPU machine (CONFIG_SECURITY_LANDLOCK, lsm=...,landlock)")


def require_landlock() -> None:
    if sandbox.landlock_abi() < 1:
        pytest.fail(LANDLOCK_MISSING)


def lane_uid(offset: int) -> int:
    uid = sandbox.worker_uid(TEST_LANE + offset)
    assert uid is not None
    return uid


@pytest.fixture(params=["landlock", "uid"])
def uid(request: pytest.FixtureRequest) -> int | None:
    """None (no uid drop) or a dedicated test-lane uid (root only)."""
    require_landlock()
    if request.param == "landlock":
        return None
    if not ROOT:
        pytest.skip("dropping to a worker uid needs root")
    return lane_uid(0)


@pytest.fixture
def private(uid: int | None) -> Iterator[Path]:
    path = sandbox.private_dir(uid)
    yield path
    if uid is not None:
        sandbox.reap(uid)
    sandbox.remove_private_dir(path)


@pytest.fixture
def own_private() -> Iterator[Path]:
    """A private dir for a child that keeps the test's uid."""
    path = sandbox.private_dir(None)
    yield path
    sandbox.remove_private_dir(path)


def confined(body: str, *, uid: int | None, private: Path, network: bool = False,
             before: str = "", readable: str = "sandbox.default_readable()",
             env: dict[str, str] | None = None, timeout: float = 60) -> tuple[list[str], str]:
    """Run ``before``, confine, then ``body`` in a fresh interpreter; return (walls, stdout).

    The child runs from the checkout (the dataset root: not readable once confined) with
    the private environment the audit gives its worker.
    """
    code = "\n".join([
        "import json, os, sys",
        "from hf_eval.isolation import walls as sandbox",
        textwrap.dedent(before),
        f"walls = sandbox.Walls(uid={uid!r}, readable={readable}, writable=({str(private)!r},),"
        f" network={network!r})",
        "print('WALLS', json.dumps(sandbox.confine(walls)), flush=True)",
        textwrap.dedent(body),
    ])
    child_env = {**os.environ, **sandbox.private_env(private), "PYTHONDONTWRITEBYTECODE": "1",
                 **(env or {})}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=child_env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"confined child failed (rc {done.returncode}):\n{done.stderr}"
    walls_line = [line for line in done.stdout.splitlines() if line.startswith("WALLS ")]
    assert walls_line, done.stdout + done.stderr
    return json.loads(walls_line[0][6:]), done.stdout


ATTEMPT = '''
def attempt(what, fn):
    try:
        fn()
    except Exception as exc:
        print("DENIED", what, type(exc).__name__, getattr(exc, "errno", None), flush=True)
    else:
        print("LEAK", what, flush=True)
'''


def assert_denied(out: str, what: str, error: str = "PermissionError") -> None:
    assert f"LEAK {what}\n" not in out, f"wall missing: {what} succeeded\n{out}"
    assert f"DENIED {what} {error}" in out, f"{what}: expected {error}\n{out}"


# --------------------------------------------------------------------------- basics
def test_landlock_is_available() -> None:
    """CI and the GPU machine must have Landlock; without it no worker may run."""
    require_landlock()
    assert sandbox.landlock_abi() >= 1


def test_worker_uid_is_per_lane() -> None:
    if ROOT:
        assert sandbox.worker_uid(0) == 61000
        assert sandbox.worker_uid(3) == 61003
    else:
        assert sandbox.worker_uid(0) is None
    with pytest.raises(ValueError):
        sandbox.worker_uid(-1)
    with pytest.raises(ValueError):
        sandbox.worker_uid(sandbox.MAX_LANES)


def test_default_readable_leaves_out_dataset_and_caches(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    dataset, cache = tmp_path / "dataset", tmp_path / "cache"
    (dataset / "sub").mkdir(parents=True)
    cache.mkdir()
    monkeypatch.setenv("HF_EVAL_CACHE", str(cache))
    monkeypatch.setattr(sys, "path", [*sys.path, "", str(dataset / "sub"), str(cache),
                                      str(tmp_path)])
    trees = sandbox.default_readable(dataset_root=dataset)
    for kept in (sys.prefix, sys.base_prefix, Path(sandbox.__file__).parent.parent, "/usr",
                 "/etc"):
        assert str(Path(kept).resolve()) in trees
    banned = [dataset, cache, Path.home() / ".cache", Path(tempfile.gettempdir()), REPO,
              Path(os.getcwd())]
    for tree in map(Path, trees):
        for b in banned:
            b = b.resolve()
            if tree == Path(sys.prefix).resolve() or tree == Path(sandbox.__file__).parent.parent:
                continue  # a venv or the package inside the checkout is fine
            if b == Path(tempfile.gettempdir()).resolve():
                # staged packages may live under it (/tmp/site on the H200); never above it
                assert not (tree == b or tree in b.parents), (tree, b)
                continue
            assert not (tree == b or b in tree.parents or tree in b.parents), (tree, b)
    # the default dataset root is the checkout holding hf_eval
    assert str(REPO) not in sandbox.default_readable()


def test_confine_refuses_a_threaded_process(tmp_path: Path) -> None:
    """Landlock confines the calling thread only: confine must refuse to run late."""
    code = textwrap.dedent(f"""
        import threading, time
        from hf_eval.isolation import walls as sandbox
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
        try:
            sandbox.confine(sandbox.Walls(uid=None, readable=(), writable=({str(tmp_path)!r},)))
        except sandbox.SandboxError as exc:
            print("REFUSED", exc)
        else:
            print("CONFINED")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30)
    assert "REFUSED confine() needs a single-threaded process" in done.stdout, done
    assert "CONFINED" not in done.stdout


# --------------------------------------------------------------------------- 1. reading
def test_reads_only_allowed_trees_and_torch_still_works(uid: int | None, private: Path,
                                                        tmp_path: Path) -> None:
    dataset = tmp_path / "dataset"
    cache = tmp_path / "home" / ".cache" / "inference-kernels"
    for d, name in ((dataset, "blob.bin"), (cache, "reference.bin")):
        d.mkdir(parents=True)
        (d / name).write_bytes(b"SECRET")
    (private / "mine.txt").write_text("mine")
    if uid is not None:
        os.chown(private / "mine.txt", uid, uid)
    body = ATTEMPT + f"""
attempt("dataset", lambda: open({str(dataset / "blob.bin")!r}, "rb").read())
attempt("dataset-listing", lambda: os.listdir({str(dataset)!r}))
attempt("cache", lambda: open({str(cache / "reference.bin")!r}, "rb").read())
attempt("checkout", lambda: open({str(REPO / "pyproject.toml")!r}, "rb").read())
attempt("tmp", lambda: os.listdir({tempfile.gettempdir()!r}))
print("PRIVATE", open({str(private / "mine.txt")!r}).read())
"""
    # torch once per run (its import is most of this file's time): with the uid drop when
    # root (both Landlock and DAC in force), else under Landlock alone
    with_torch = uid is not None or not ROOT
    if with_torch:
        body += 'import torch\nprint("TORCH", torch.arange(4.0).sum().item(), os.getuid())\n'

    # both forbidden trees are on sys.path and the cache is $HF_EVAL_CACHE: the exclusion
    # in default_readable is what keeps them out, not merely their absence from the list
    before = f"""
        assert open({str(dataset / "blob.bin")!r}, "rb").read() == b"SECRET"
        assert open({str(cache / "reference.bin")!r}, "rb").read() == b"SECRET"
        print("PRE readable")
    """
    walls, out = confined(body, uid=uid, private=private, before=before,
                          readable=f"sandbox.default_readable(dataset_root={str(dataset)!r})",
                          env={"HF_EVAL_CACHE": str(cache),
                               "PYTHONPATH": f"{dataset}:{cache}"})
    assert "PRE readable" in out
    for what in ("dataset", "dataset-listing", "cache", "checkout", "tmp"):
        assert_denied(out, what)
    assert "PRIVATE mine" in out
    if with_torch:
        assert f"TORCH 6.0 {os.geteuid() if uid is None else uid}" in out
    assert any(w.startswith("landlock-abi") for w in walls)


@pytest.mark.skipif(not os.path.exists("/dev/nvidiactl"), reason="no NVIDIA GPU here")
def test_cuda_and_triton_work_when_confined(uid: int | None, private: Path) -> None:
    """The GPU machine's usability check: CUDA ioctls on /dev/nvidia*, CUDA graphs, a Triton
    kernel compiled into the private dir, and (uid drop) CUDA in a child process."""
    (private / "kern.py").write_text(textwrap.dedent("""
        import triton, triton.language as tl
        @triton.jit
        def add_one(a, b, n, B: tl.constexpr):
            i = tl.program_id(0) * B + tl.arange(0, B)
            tl.store(b + i, tl.load(a + i, mask=i < n) + 1, mask=i < n)
    """))
    body = f"""
sys.path.insert(0, {str(private)!r})
import subprocess, torch, kern
x = torch.randn(512, 512, device="cuda")
print("MATMUL", torch.allclose((x @ x).cpu(), x.cpu() @ x.cpu(), atol=1e-2, rtol=1e-2))
y = torch.empty_like(x)
kern.add_one[(x.numel() // 1024,)](x, y, x.numel(), B=1024)
print("TRITON", torch.equal(y, x + 1))
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    z = x * 2
g.replay()
torch.cuda.synchronize()
print("GRAPH", torch.equal(z, x * 2))
child = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                       capture_output=True, text=True)
print("CHILD", child.stdout.strip() or child.stderr[-200:])
"""
    _, out = confined(body, uid=uid, private=private, timeout=300)
    assert "MATMUL True" in out and "TRITON True" in out and "GRAPH True" in out, out
    if uid is not None:
        child = out.split("CHILD ", 1)[1].split()[0]
        assert child.isdigit() and int(child) > 0, out


# --------------------------------------------------------------------------- 2. writing
def test_writes_only_inside_private_dir(uid: int | None, private: Path, tmp_path: Path) -> None:
    tag = f"hf-eval-leak-{os.getpid()}-{uid}"
    outside = [tmp_path / "out.txt", Path(tempfile.gettempdir()) / tag, Path(sys.prefix) / tag,
               Path("/dev/shm") / tag]
    try:
        _check_writes(outside, uid, private, tmp_path)
    finally:  # a failed run must not leave files behind for later runs
        for p in outside:
            p.unlink(missing_ok=True)


def _check_writes(outside: list[Path], uid: int | None, private: Path, tmp_path: Path) -> None:
    body = ATTEMPT + "\n".join(
        f"attempt('write{i}', lambda: open({str(p)!r}, 'w').write('x'))"
        for i, p in enumerate(outside[:3])) + f"""
attempt("mkdir", lambda: os.mkdir({str(tmp_path / "newdir")!r}))
os.makedirs({str(private / "a" / "b")!r})
open({str(private / "a" / "b" / "ok.txt")!r}, "w").write("ok")
import tempfile
import time
with tempfile.NamedTemporaryFile(dir=None) as f:
    f.write(b"tmp ok")  # TMPDIR is the private dir
open({str(outside[3])!r}, "w").write("private shm")
print("WROTE", open({str(private / "a" / "b" / "ok.txt")!r}).read())
"""
    walls, out = confined(body, uid=uid, private=private)
    for i in range(3):
        assert_denied(out, f"write{i}")
    assert_denied(out, "mkdir")
    assert "WROTE ok" in out
    assert (private / "a" / "b" / "ok.txt").read_text() == "ok"
    for p in [*outside[:3], tmp_path / "newdir"]:
        assert not p.exists(), p
    if ROOT:  # /dev/shm of the worker is a private tmpfs
        assert "mountns" in walls
        assert not outside[3].exists()


# --------------------------------------------------------------------------- 3. memory
SECRET_HOLDER = """
import ctypes, os, sys
buf = ctypes.create_string_buffer(b"TOPSECRET-" * 8)
print(os.getpid(), ctypes.addressof(buf), flush=True)
sys.stdin.read()
"""

READ_MEMORY = ATTEMPT + '''
import ctypes
class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
libc = ctypes.CDLL(None, use_errno=True)
libc.process_vm_readv.restype = ctypes.c_ssize_t
def vm_readv(pid, addr):
    out = ctypes.create_string_buffer(80)
    local, remote = IoVec(ctypes.addressof(out), 80), IoVec(addr, 80)
    n = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    if n < 0:
        e = ctypes.get_errno()
        raise PermissionError(e, os.strerror(e)) if e == 1 else OSError(e, os.strerror(e))
    assert out.raw.startswith(b"TOPSECRET"), out.raw
def mem(pid, addr):
    with open(f"/proc/{pid}/mem", "rb") as f:
        f.seek(addr)
        assert f.read(80).startswith(b"TOPSECRET")
def environ(pid):
    open(f"/proc/{pid}/environ", "rb").read()
'''


@pytest.fixture
def secret_holder() -> Iterator[tuple[int, int]]:
    """A process started by the test (as root when the test is) with a secret in memory."""
    proc = subprocess.Popen([sys.executable, "-c", SECRET_HOLDER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pid, addr = map(int, proc.stdout.readline().split())
    yield pid, addr
    proc.kill()
    proc.wait()


def test_memory_of_other_processes_is_unreachable(uid: int | None, private: Path,
                                                  secret_holder: tuple[int, int]) -> None:
    pid, addr = secret_holder
    body = f"""
attempt("mem", lambda: mem({pid}, {addr}))
attempt("vm_readv", lambda: vm_readv({pid}, {addr}))
attempt("environ", lambda: environ({pid}))
attempt("parent-environ", lambda: environ(os.getppid()))
"""
    if ROOT:  # control: the very same reads work in the child before confine
        before = READ_MEMORY + f"mem({pid}, {addr}); vm_readv({pid}, {addr}); print('PRE read')"
    else:
        before = READ_MEMORY
    _, out = confined(body, uid=uid, private=private, before=before)
    if ROOT:
        assert "PRE read" in out
    for what in ("mem", "environ", "parent-environ"):
        assert_denied(out, what)
    assert_denied(out, "vm_readv", f"PermissionError {errno.EPERM}")


def test_cannot_signal_outside_the_sandbox(uid: int | None, private: Path,
                                           secret_holder: tuple[int, int]) -> None:
    if uid is None and sandbox.landlock_abi() < 6:
        pytest.skip("signal scoping needs Landlock ABI 6")
    pid, _ = secret_holder
    body = ATTEMPT + f"""
import signal
attempt("kill-parent", lambda: os.kill(os.getppid(), 0))
attempt("kill-other", lambda: os.kill({pid}, signal.SIGTERM))
"""
    _, out = confined(body, uid=uid, private=private)
    assert_denied(out, "kill-parent")
    assert_denied(out, "kill-other")


def _same_uid_python(code: str, uid: int, **kwargs: object) -> subprocess.Popen[str]:
    """A plain (not confined) Python process running as ``uid``, the interpreter made
    reachable the way confine does it (a private mount namespace), no Landlock."""
    prelude = textwrap.dedent(f"""
        import os
        from hf_eval.isolation import walls as sandbox
        assert sandbox._libc.unshare(sandbox.CLONE_NEWNS) == 0
        sandbox._mount(None, "/", None, sandbox.MS_REC | sandbox.MS_PRIVATE)
        sandbox._make_reachable(sandbox.default_readable(), {uid})
        os.setgroups([]); os.setresgid({uid}, {uid}, {uid}); os.setresuid({uid}, {uid}, {uid})
        sandbox._prctl(sandbox.PR_SET_DUMPABLE, 1)  # the uid change cleared it
    """)
    return subprocess.Popen([sys.executable, "-c", prelude + code], text=True, cwd="/",
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


@pytest.mark.skipif(not ROOT, reason="needs root to run both processes as one worker uid")
@pytest.mark.parametrize("hardened", [False, True])
def test_harden_parent_stops_same_uid_readers(hardened: bool) -> None:
    uid = lane_uid(5)
    holder = _same_uid_python(("sandbox.harden_parent()\n" if hardened else "")
                              + "print(sandbox.is_dumpable())\n" + SECRET_HOLDER, uid,
                              stdin=subprocess.PIPE)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == str(not hardened)
        pid, addr = map(int, holder.stdout.readline().split())
        reader = _same_uid_python(READ_MEMORY + f'attempt("mem", lambda: mem({pid}, {addr}))\n',
                                  uid)
        out, err = reader.communicate(timeout=30)
        assert reader.returncode == 0, err
        if hardened:
            assert_denied(out, "mem")
        else:  # control: without it, a same-uid process reads the secret
            assert "LEAK mem" in out
    finally:
        holder.kill()
        holder.wait()
        sandbox.reap(uid)


# --------------------------------------------------------------------------- 4. reap
def _alive(pid: int) -> bool:
    info = sandbox._status_uids(pid)
    return info is not None and not info[1]


def test_a_process_named_in_bytes_that_are_not_text_is_read_all_the_same() -> None:
    """Any process may name itself any bytes (``PR_SET_NAME``), and the harness reads every
    process's status while it leases and reaps uids: a name that is not UTF-8, or that
    holds what Python takes for a line break (the kernel escapes only newlines) followed
    by a forged field, must not stop it or be read as a field (a worker of one audit
    would otherwise stop every other on the host)."""
    code = ("import ctypes, sys, time; "
            "ctypes.CDLL(None).prctl(15, b'\\xff\\x1cUid:\\tx', 0, 0, 0); "
            "print(open('/proc/self/comm', 'rb').read(), flush=True); time.sleep(30)")
    named = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert named.stdout.readline().strip() == repr(b"\xff\x1cUid:\tx\n").encode()
        assert sandbox._status_uids(named.pid) == ({os.getuid()}, False)
        assert named.pid in sandbox._live_pids(os.getuid())
    finally:
        named.kill()
        named.wait()


def test_a_process_whose_main_thread_ended_is_alive_while_another_runs() -> None:
    """The main thread's status reads as a zombie once it has ended, but the process runs
    on in its other threads: the uid sweep must still see it live (and kill it)."""
    code = ("import ctypes, threading, time; "
            "threading.Thread(target=time.sleep, args=(30,)).start(); "
            "print('started', flush=True); ctypes.CDLL(None).pthread_exit(None)")
    headless = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert headless.stdout.readline().strip() == b"started"
        deadline = time.monotonic() + 10
        while b"Z" not in Path(f"/proc/{headless.pid}/stat").read_bytes().split()[2:3]:
            assert time.monotonic() < deadline, "the main thread did not end"
            time.sleep(0.01)
        assert sandbox._status_uids(headless.pid) == ({os.getuid()}, False)
        assert headless.pid in sandbox._live_pids(os.getuid())
    finally:
        headless.kill()
        headless.wait()


@pytest.mark.skipif(not ROOT, reason="reap() kills by uid: needs root and a worker uid")
def test_reap_kills_what_the_candidate_left_and_nothing_else(tmp_path: Path) -> None:
    require_landlock()
    uid, other_uid = lane_uid(1), lane_uid(2)
    private = sandbox.private_dir(uid)
    bystander = subprocess.Popen(["sleep", "300"], user=other_uid, group=other_uid)
    try:
        body = """
import subprocess
p = subprocess.Popen(["sleep", "300"], start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("ORPHAN", p.pid, flush=True)
"""
        _, out = confined(body, uid=uid, private=private)
        orphan = int(out.split("ORPHAN ")[1].split()[0])
        assert _alive(orphan), "the detached child should have outlived the worker"
        assert sandbox._status_uids(orphan)[0] == {uid}
        assert sandbox.reap(uid) >= 1
        assert not _alive(orphan)
        assert bystander.poll() is None, "reap() killed another lane's process"
        assert _alive(bystander.pid)
        assert sandbox.reap(uid) == 0
    finally:
        bystander.kill()
        bystander.wait()
        sandbox.remove_private_dir(private)
    with pytest.raises(ValueError):
        sandbox.reap(0)
    with pytest.raises(ValueError):
        sandbox.reap(os.getuid())


# --------------------------------------------------------------------------- 5. network
@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on the test's loopback, accepting in the background."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


CONNECT = """
import socket
def connect(port):
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
"""


def test_no_network(uid: int | None, private: Path, listener: int) -> None:
    body = ATTEMPT + f"""
attempt("connect", lambda: connect({listener}))
# the interfaces the worker's network namespace has (netlink, if_nameindex's way to
# ask, is refused in a worker)
lines = open("/proc/net/dev").readlines()[2:]
print("IFACES", sorted(line.split(":")[0].strip() for line in lines))
"""
    walls, out = confined(body, uid=uid, private=private,
                          before=CONNECT + f"connect({listener}); print('PRE connected')")
    assert "PRE connected" in out
    assert "LEAK connect" not in out and "DENIED connect" in out, out
    if ROOT:
        assert "netns" in walls
        assert "IFACES ['lo']" in out
    if sandbox.landlock_abi() >= 4:
        assert "landlock-net" in walls
        assert_denied(out, "connect")  # Landlock's EACCES comes before the routing error


@pytest.mark.skipif(not ROOT, reason="without root there is no network namespace")
def test_network_namespace_alone_blocks_loopback(listener: int) -> None:
    """The netns wall on its own (as root, no Landlock network rule)."""
    code = ATTEMPT + CONNECT + f"""
from hf_eval.isolation import walls as sandbox
assert sandbox._libc.unshare(sandbox.CLONE_NEWNET) == 0
attempt("connect", lambda: connect({listener}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30).stdout
    assert_denied(out, "connect", f"OSError {errno.ENETUNREACH}")


def test_landlock_network_rule_alone_blocks_tcp(own_private: Path, listener: int) -> None:
    """The second network wall (Landlock ABI >= 4), which also holds when not root."""
    if sandbox.landlock_abi() < 4:
        pytest.skip("Landlock TCP rules need ABI 4")
    code = ATTEMPT + CONNECT + f"""
from hf_eval.isolation import walls as sandbox
print(sandbox._apply_landlock(sandbox.default_readable(), ({str(own_private)!r},),
                              restrict_tcp=True))
attempt("connect", lambda: connect({listener}))
attempt("bind", lambda: socket.create_server(("127.0.0.1", 0)))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30)
    assert_denied(done.stdout, "connect", f"PermissionError {errno.EACCES}")
    assert_denied(done.stdout, "bind", f"PermissionError {errno.EACCES}")


@pytest.mark.skipif(not ROOT, reason="network=True only changes anything as root")
def test_network_true_keeps_the_network(own_private: Path, listener: int) -> None:
    require_landlock()
    walls, out = confined(CONNECT + f"connect({listener}); print('CONNECTED')", uid=None,
                          private=own_private, network=True)
    assert "CONNECTED" in out
    assert "netns" not in walls and "landlock-net" not in walls


# --------------------------------------------------------------------------- 6. private dir
def test_private_dir_ownership_mode_and_removal() -> None:
    own = sandbox.private_dir(None)
    try:
        st = own.stat()
        assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
        assert own.parent == Path(tempfile.gettempdir()).resolve()
    finally:
        sandbox.remove_private_dir(own)
    assert not own.exists()
    if ROOT:
        uid = lane_uid(3)
        theirs = sandbox.private_dir(uid)
        st = theirs.stat()
        assert stat.S_IMODE(st.st_mode) == 0o700 and (st.st_uid, st.st_gid) == (uid, uid)
        sandbox.remove_private_dir(theirs)
        assert not theirs.exists()
    with pytest.raises(ValueError):
        sandbox.remove_private_dir(Path(tempfile.gettempdir()))


def test_remove_private_dir_survives_hostile_contents(tmp_path: Path) -> None:
    """The candidate may chmod 000 its dirs and plant symlinks to files it wants gone."""
    outside = tmp_path / "keep.txt"
    outside.write_text("keep")
    path = sandbox.private_dir(None)
    (path / "locked" / "deep").mkdir(parents=True)
    (path / "locked" / "deep" / "f").write_text("x")
    (path / "link").symlink_to(outside)
    (path / "dirlink").symlink_to(tmp_path)
    os.chmod(path / "locked" / "deep", 0)
    os.chmod(path / "locked", 0)
    sandbox.remove_private_dir(path)
    assert not path.exists()
    assert outside.read_text() == "keep"


def test_confined_worker_files_are_removable(uid: int | None, private: Path) -> None:
    confined(f"os.makedirs({str(private / 'x' / 'y')!r}); "
             f"open({str(private / 'x' / 'y' / 'z')!r}, 'w').write('z'); "
             f"os.chmod({str(private / 'x')!r}, 0)", uid=uid, private=private)
    sandbox.remove_private_dir(private)
    assert not private.exists()


# --------------------------------------------------------------------------- 7. degradation
def test_without_uid_reports_no_uid_wall(own_private: Path) -> None:
    """uid None (what a non-root laptop gets): no uid wall, every other wall still on."""
    require_landlock()
    body = """
status = open("/proc/self/status").read()
fields = dict(line.split(":", 1) for line in status.splitlines())
import resource, ctypes
print("NNP", fields["NoNewPrivs"].strip(), "CAPEFF", fields["CapEff"].strip(),
      "CAPBND", fields["CapBnd"].strip(), "UID", os.getuid())
print("CORE", resource.getrlimit(resource.RLIMIT_CORE))
print("DUMPABLE", sandbox.is_dumpable())
"""
    walls, out = confined(body, uid=None, private=own_private)
    assert not [w for w in walls if w.startswith("uid:")]
    for wall in ("no_new_privs", "rlimit_core", "nondumpable"):
        assert wall in walls
    assert f"landlock-abi{sandbox.landlock_abi()}" in walls
    assert "NNP 1" in out and "CORE (1, 1)" in out and "DUMPABLE False" in out
    assert f"UID {os.geteuid()}" in out
    if ROOT:  # root without a uid: capabilities are gone anyway
        assert {"netns", "mountns", "capbset", "caps"} <= set(walls)
        assert "CAPEFF 0000000000000000" in out and "CAPBND 0000000000000000" in out
    else:
        assert not {"netns", "mountns", "capbset", "caps"} & set(walls)


@pytest.mark.skipif(not ROOT, reason="as non-root, test_without_uid_reports_no_uid_wall is it")
def test_really_not_root_degrades_to_landlock(tmp_path: Path, listener: int) -> None:
    """A genuinely unprivileged process (root drops to a spare uid first, as a laptop user
    would be): confine skips netns, mountns and the uid but still applies Landlock."""
    require_landlock()
    uid = lane_uid(6)
    private = sandbox.private_dir(uid)
    secret = private.parent / f"hf-eval-secret-{os.getpid()}"
    secret.write_text("secret")
    os.chown(secret, uid, uid)  # DAC would let it through: only Landlock can stop this
    try:
        proc = _same_uid_python("import json\n" + ATTEMPT + CONNECT + textwrap.dedent(f"""
            walls = sandbox.confine(sandbox.Walls(uid={uid}, readable=sandbox.default_readable(),
                                                  writable=({str(private)!r},)))
            print("WALLS", json.dumps(walls))
            attempt("secret", lambda: open({str(secret)!r}).read())
            attempt("connect", lambda: connect({listener}))
            open({str(private / "ok")!r}, "w").write("ok")
        """), uid)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        walls = json.loads(out.split("WALLS ", 1)[1].splitlines()[0])
        assert not {"netns", "mountns", "capbset", "caps"} & set(walls)
        assert not [w for w in walls if w.startswith("uid:")]
        assert {"rlimit_core", "no_new_privs", "nondumpable"} <= set(walls)
        assert f"landlock-abi{sandbox.landlock_abi()}" in walls
        assert_denied(out, "secret")
        if sandbox.landlock_abi() >= 4:
            assert_denied(out, "connect")
        assert (private / "ok").read_text() == "ok"
    finally:
        secret.unlink()
        sandbox.reap(uid)
        sandbox.remove_private_dir(private)


@pytest.mark.skipif(not ROOT, reason="needs root")
def test_uid_wall_is_reported_and_irreversible() -> None:
    require_landlock()
    uid = lane_uid(4)
    private = sandbox.private_dir(uid)
    body = ATTEMPT + """
attempt("setuid0", lambda: os.setuid(0))
print("IDS", os.getresuid(), os.getresgid(), os.getgroups())
"""
    try:
        walls, out = confined(body, uid=uid, private=private)
    finally:
        sandbox.remove_private_dir(private)
    assert f"uid:{uid}" in walls
    assert walls.index("netns") < walls.index(f"landlock-abi{sandbox.landlock_abi()}") \
        < walls.index(f"uid:{uid}")
    assert_denied(out, "setuid0")
    assert f"IDS {(uid,) * 3} {(uid,) * 3} []" in out


def test_harden_parent_marks_non_dumpable() -> None:
    code = ("from hf_eval.isolation import walls as sandbox; a = sandbox.is_dumpable(); "
            "sandbox.harden_parent(); print(a, sandbox.is_dumpable())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30).stdout
    assert out.strip() == "True False"


def test_landlock_abi_rights_match_the_uapi() -> None:
    fs1, net1, scoped1 = sandbox._abi_rights(1)
    assert fs1 == (1 << 13) - 1 and net1 == 0 and scoped1 == 0
    fs7, net7, scoped7 = sandbox._abi_rights(7)
    assert fs7 == (1 << 16) - 1 and net7 == 3 and scoped7 == 3
    assert ctypes.sizeof(sandbox._PathBeneathAttr) == 12
    assert sandbox.SYS_LANDLOCK_CREATE_RULESET == 444



def test_a_relative_pythonpath_entry_is_refused_before_a_worker_starts() -> None:
    """A run on the H200 gave the workers PYTHONPATH=/tmp/site13:...:. and every worker died
    importing hf_eval (results/h200/2026-12-02-1242-qsa-index-engine-path/README.md): the
    harness now says why."""
    from hf_eval.isolation.workers import inherited_environment

    env = {"PYTHONPATH": "/tmp/site13:/repo", "PATH": "/usr/bin", "SECRET": "x"}
    assert inherited_environment(env) == {"PYTHONPATH": "/tmp/site13:/repo", "PATH": "/usr/bin"}
    with pytest.raises(sandbox.SandboxError, match=r"PYTHONPATH entry '\.' is relative"):
        inherited_environment({"PYTHONPATH": "/tmp/site13:."})
    # An empty entry (a common ``$PYTHONPATH:/x`` with the variable unset) is left alone.
    assert inherited_environment({"PYTHONPATH": "/a::/b"}) == {"PYTHONPATH": "/a::/b"}


def test_an_audit_process_sleeps_its_openmp_threads_and_a_worker_keeps_its_default() -> None:
    """The audit's OpenMP threads spin for a while after each of its own parallel regions
    (a reference, a check) unless OMP_WAIT_POLICY says otherwise; spinning, they take the
    cores that the worker timed next runs on. Importing the package sets PASSIVE before
    torch loads, in every process that audits (the command line, a library caller, the
    metric, a Ray actor), and not in one whose environment marks it as running candidates
    (the spawner and its workers: ``tests/adversarial/worker_openmp_policy``)."""
    from hf_eval import WORKER_VARIABLE

    script = "import os, hf_eval; print('policy', os.environ.get('OMP_WAIT_POLICY'))"
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", WORKER_VARIABLE)}
    for extra, expected in (({}, "policy PASSIVE"), ({WORKER_VARIABLE: "1"}, "policy None"),
                            ({WORKER_VARIABLE: ""}, "policy PASSIVE")):
        done = subprocess.run([sys.executable, "-c", script], env={**env, **extra},
                              capture_output=True, text=True, timeout=120)
        assert done.stdout.strip() == expected, done.stdout[-500:] + done.stderr[-500:]


def test_the_report_says_whether_the_openmp_policy_came_before_torch() -> None:
    """OpenMP reads its policy when torch loads it: a program that imported torch before
    the package keeps OpenMP's default, and the report's environment says so. The metric's
    script (which ``evaluate.load`` runs as a file of its own) imports the package first."""
    from pathlib import Path

    metric = Path(__file__).parents[1] / "hf_eval/kernel_acceptance/kernel_acceptance.py"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    script = ("import torch, hf_eval; from hf_eval.judge.report import environment; "
              "print(environment(torch.device('cpu'))['omp_wait_policy'])")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.strip() == "PASSIVE (too late)", done.stderr[-500:]
    # in time, as OpenMP reads it: a spin count that overrides the policy is named, and a
    # process marked as running candidates has OpenMP's default
    script = script.replace("import torch, hf_eval", "import hf_eval, torch")
    for extra, expected in (({"GOMP_SPINCOUNT": "infinite"}, "PASSIVE, GOMP_SPINCOUNT=infinite"),
                            ({"HF_EVAL_WORKER_PROCESS": "1"}, "default")):
        done = subprocess.run([sys.executable, "-c", script], env={**env, **extra},
                              capture_output=True, text=True, timeout=120)
        assert done.stdout.strip() == expected, done.stderr[-500:]
    script = ("import runpy, sys; runpy.run_path(sys.argv[1]); import hf_eval; "
              "print(hf_eval.OPENMP_POLICY_IN_TIME)")
    done = subprocess.run([sys.executable, "-c", script, str(metric)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().endswith("True"), done.stdout[-500:] + done.stderr[-500:]
