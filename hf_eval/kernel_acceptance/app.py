"""Hub Space entry point: the standard ``evaluate`` widget for this metric.

``evaluate`` 0.4.6's widget uses the gradio 3 API (pinned in README.md's ``sdk_version``
and in requirements.txt). The Space needs a dataset checkout for the metric to read
(``root``); its requirements install ``hf_eval`` from one wheel file uploaded to the
Space, never by cloning the dataset repository (146 GB with its tensors).
"""

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("kernel_acceptance.py")
launch_gradio_widget(module)
