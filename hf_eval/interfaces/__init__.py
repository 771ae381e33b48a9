"""The SGLang interface audit as data: its models and rules (``audit``), its companion
files (``companions``) and its README rendered from them (``readme``)."""
