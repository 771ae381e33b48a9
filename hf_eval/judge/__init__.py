"""The audit: plans, lanes and verdicts (``audit``), one solution on one case
(``trials``), fresh input sets (``input_sets``), the acceptance rules, records and
reports (``records``, ``report``, ``summary``), the agent service (``serve``), Ray lanes
(``distributed``) and the harness's own timing (``timing``). Candidates run behind
:mod:`hf_eval.isolation`."""
