"""A global added to the worker's harness module, named like a builtin: inside
``collect`` it would pair each lent slot with itself, so the copy of the outputs that
the stand-in pays is a copy onto itself, while run() writes its answer into the slot
with ``out=`` and returns an empty tensor. The harness's namespaces are compared name
for name after every request, added names too."""
import sys

import lent_kit
import torch

sys.modules["hf_eval.isolation.server"].zip = lent_kit.tuple_slot_zip
run = lent_kit.slot_answer_run(
    lambda slot: (torch.empty_like(slot[0]), torch.empty_like(slot[1])))
