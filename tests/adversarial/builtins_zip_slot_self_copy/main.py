"""shadow_builtin_in_harness through the builtins module itself: ``builtins.zip``
replaced, so that inside ``collect`` each lent slot is paired with itself (the copy the
stand-in pays becomes a copy onto itself) while run() writes its answer into the slots
and returns garbage. The names of ``builtins`` are harness state."""
import builtins

import lent_kit
import torch

builtins.zip = lent_kit.tuple_slot_zip
run = lent_kit.slot_answer_run(
    lambda slot: (torch.full_like(slot[0], 7.0), torch.full_like(slot[1], 3)))
