"""The embedded sample: its recipes (``cases/``), the builder, the regenerator of large
tensors and the fresh suite. The generators themselves are the families'
(:mod:`hf_eval.families`)."""
