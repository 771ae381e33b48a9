"""slot_list_swap_direct, with the worker's record of the lent slots (an instance
attribute) rebuilt to match the dummies: the answer goes into the real slots from run(),
the garbage it returns into the dummies. The serve loop holds the record it saw when
the slots were lent, and the rebuilt one is not that object."""

import lent_kit

run = lent_kit.lent_rewriting_run({})
