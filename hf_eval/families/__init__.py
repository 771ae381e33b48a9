"""Op families: one module per ``op_type``, each holding everything that knows about it.

A family is a folder, ``hf_eval/families/<op_type>/``. Its module (``__init__.py``) holds
the sample generator, the value rules the checker applies, the benchmark-shape inputs, the
roofline's exact counts and, when the family needs one, its own second-input-set
transform; it declares them in one :class:`~hf_eval.families.base.Family` named
``FAMILY``. Beside it, per definition of the family, lie the definition's data:
``<definition>.cases.json`` (the sample's recipes, :mod:`hf_eval.samples.cases`),
``<definition>.shapes.json`` (the benchmark shapes, :mod:`hf_eval.bench.shapes`) and
``<definition>.roofline.json`` (the roofline formulas, :mod:`hf_eval.bench.roofline`).
:mod:`hf_eval.families.registry` lists the families: adding one is a folder here plus one
line there.
"""
