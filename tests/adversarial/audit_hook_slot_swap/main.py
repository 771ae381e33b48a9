"""c_profile_hook_slot_swap through an audit hook (sys.addaudithook), which _cleared_hooks
does not clear: at collect's _state_problems -> _cleared_hooks ('sys.setprofile' event,
after the slot check) the hook swaps the entries of every slot list for dummies
the
harness copies the garbage run() returns into the dummies while the real slots keep the
answers run() wrote there itself. The lists are restored after collect's copy (next
sys.setprofile event, in the serve loop) so the state stays as the harness left it."""
import sys

import lent_kit

K = {"armed": False, "saved": None}
hook = lent_kit.slot_swapping_hook(K)
sys.addaudithook(hook)
run = lent_kit.arming_run(K)
