"""The Hugging Face side: the README card and its generated sections (``card``), the
viewer's typed rows (``viewer``), workloads as ``datasets`` rows (``rows``) and their
tensors on access (``lazy``)."""
