"""Which seccomp-denied syscall stops CUDA from initialising (a child per variant)."""
import os, sys
sys.path.insert(0, os.getcwd())
from hf_eval.isolation import walls

VARIANTS = {"listen": (50,), "accept": (43, 288), "connect": (42,), "sendto": (44,), "sendmsg": (46,),
            "socketpair+listen": (53, 50), "inotify+fanotify": (253, 254, 294, 300, 301),
            "proposed": (248, 249, 250, 323, 53, 50, 253, 254, 294, 300, 301)}
for name, numbers in VARIANTS.items():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            walls._prctl(walls.PR_SET_NO_NEW_PRIVS, 1)
            walls._DENIED["x86_64"] = (0xC000003E, 0x40000000, numbers)
            walls._apply_seccomp()
            import torch
            out = f"{torch.cuda.device_count()} {torch.zeros(1, device='cuda').item()}"
        except BaseException as exc:
            out = f"{type(exc).__name__}: {str(exc)[:120]}"
        os.write(w, out.encode()); os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    print(f"{name:12s} {os.read(r, 4096).decode()}")
