"""Op families: one module per ``op_type``, each holding everything that knows about it.

A family module (``hf_eval/families/<op_type>.py``) holds the sample generator, the value
rules the checker applies, the benchmark-shape inputs, the roofline's exact counts and,
when the family needs one, its own second-input-set transform; it declares them in one
:class:`~hf_eval.families.base.Family` named ``FAMILY``. :mod:`hf_eval.families.registry`
lists them: adding a family is one file here plus one line there.
"""
