"""Hub Space entry point: the standard ``evaluate`` widget for this metric.

``evaluate`` 0.4.6's widget uses the gradio 3 API (pinned in README.md's ``sdk_version``
and in requirements.txt). The Space needs the dataset checkout the metric reads
(``root``): its requirements install ``hf_eval`` from the dataset repository.
"""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("kernel_acceptance.py")
launch_gradio_widget(module)
