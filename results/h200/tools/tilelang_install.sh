#!/usr/bin/env bash
# Install the QSA indexer's engine path (TileLang 0.1.12 and its dependencies,
# results/h200/2026-12-02-library-wheels/library-wheels.txt) into /tmp/site13, a site of its
# own, from the three pieces
# the calls `mkdir -p /tmp/stage && cp .stage13/K/piece13.K /tmp/stage/` (carry
# [".stage13/K"], K = 1..3) left in /tmp/stage. Its own site because TileLang pins
# apache-tvm-ffi <= 0.1.11 (as SGLang 0.5.23 does) while /tmp/site keeps FlashInfer's
# 0.1.15.post2: only commands run with PYTHONPATH=/tmp/site13:$PYTHONPATH see it.
# Then a smoke test: the imports and the versions they report.
#
#   bash results/h200/tools/tilelang_install.sh          # from the repository root
set -euo pipefail
TAR_SHA256=4292820070459b62dcb40b9008187551a6f2864216851bb9aa3fd8ddb9863d11
if [ ! -f /tmp/site13/.installed ]; then
  cat /tmp/stage/piece13.1 /tmp/stage/piece13.2 /tmp/stage/piece13.3 > /tmp/stage/wheels13.tar
  echo "$TAR_SHA256  /tmp/stage/wheels13.tar" | sha256sum -c -
  mkdir -p /tmp/stage/w13 && tar xf /tmp/stage/wheels13.tar -C /tmp/stage/w13
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/site13 /tmp/stage/w13/*.whl
  touch /tmp/site13/.installed
fi
PYTHONPATH=/tmp/site13:${PYTHONPATH:-} python3 - <<'PY'
import importlib.metadata as md
import tvm_ffi
import tilelang
print("tilelang", tilelang.__version__, "apache-tvm-ffi", md.version("apache-tvm-ffi"),
      "from", tvm_ffi.__file__)
PY
