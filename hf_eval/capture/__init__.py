"""Dataset building: capture workloads from running PyTorch programs, replay them against the
references, and move workloads between this format and FlashInfer-Bench's.

- :class:`Capture` (``recorder.py``): hooks ops in a running program and writes workloads;
- ``adapters.py``: engine arguments -> a definition's inputs (recorded adaptations);
- ``matching.py``: shapes and constants against definitions' ``capture:`` tags;
- ``proposals.py``: new per-shape definitions for calls nothing matches;
- ``replay.py``: the engine outputs receipts hold (``expected_output``) against the
  references, under task tolerances;
- ``interop.py``: FlashInfer Trace import and export.
"""

from hf_eval.capture.adapters import Adapted, Call, NotAdaptable, OpSpec
from hf_eval.capture.recorder import Capture, CaptureReport, Limits, Sampling

__all__ = ["Adapted", "Call", "Capture", "CaptureReport", "Limits", "NotAdaptable", "OpSpec",
           "Sampling"]
