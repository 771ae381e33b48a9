"""``python -m hf_eval``."""

import sys

from hf_eval.cli import main

sys.exit(main())
