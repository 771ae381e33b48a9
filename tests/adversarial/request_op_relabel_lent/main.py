"""``lent_rewrite`` (the record of the lent slots rebuilt to match other slot lists) with
the request relabelled ``slots`` from inside run(): the serve loop re-recorded the lent
slots after any request whose operation read ``slots`` once the handler was done. The
operation must be read before the handler runs."""

import lent_kit

run = lent_kit.lent_rewriting_run({}, relabel=True)
