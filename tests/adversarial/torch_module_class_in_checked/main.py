"""Gives the ``torch`` module a class of its own whose attribute reads run the
candidate's code, so that the output check's read of ``torch.strided`` (after the state
check) could point the lent slots elsewhere. The worker's audit hook refuses a new class
for any module loaded before the candidate: the import fails."""
import types

import torch
from lent_kit import find_worker, slot_writing_run


class _Module(types.ModuleType):
    def __getattribute__(self, name):
        return types.ModuleType.__getattribute__(self, name)


torch.__class__ = _Module
run = slot_writing_run(find_worker())
