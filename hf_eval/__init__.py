"""inference-kernels evaluation harness: schema, tensor store, acceptance, audit, checker."""

__version__ = "0.1.0"
