"""Says which OpenMP wait policy its worker was started with (the audit's processes sleep
their OpenMP threads; a worker keeps OpenMP's own policy, as any program would)."""
import os


def run(x, w, scale):
    raise RuntimeError(f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
