"""Device-campaign code: benchmark shapes, rooflines, the H200 report (``hf-eval bench``).

Why apart from the audit: the audit judges kernels on the dataset's workloads and runs
anywhere; this package times them at the engines' scale on a GPU and turns device runs
into the records under ``results/h200`` and the report in ``docs/h200``. It reuses the
audit's lane (every call checked, fresh content, the audit's clock) and each family's
benchmark inputs and counts.

- :mod:`hf_eval.bench.shapes`: the shape files (``<definition>.shapes.json`` in
  ``hf_eval/families/<op_type>/``), validated;
  inputs of a shape drawn on the device;
- :mod:`hf_eval.bench.roofline`: FLOPs and compulsory bytes (``<definition>.roofline.json``
  beside them), ceilings;
- :mod:`hf_eval.bench.run`: ``hf-eval bench run``: time solutions at every shape;
- :mod:`hf_eval.bench.report`: ``hf-eval bench report``: device-run files (results/h200) ->
  summary and preferred solutions (results/h200/report) and docs/h200/performance.md,
  judged against the goals in ``goals.json``.
"""
