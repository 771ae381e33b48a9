#!/usr/bin/env bash
# Run HERE (not on the device), from the repository root: the wheels `audit --ray` needs on
# the device, in the git-ignored .whl-ray/ (carry it with .whl; see ray_vs_local.sh).
# The device image lacks ray and jsonschema (docs: /work/.library/device/KINDS.md's
# package list; attrs and typing-extensions are there). Ray's wheel (79.3 MB) is over
# the 64 MiB a call may carry, so slim_ray_wheel.py leaves out its Java worker, the
# dashboard's web client and the AI libraries (39.2 MB left).
set -euo pipefail
cd "$(dirname "$0")/../../.."
get=(python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all:
     --python-version 3.12 --implementation cp --platform manylinux2014_x86_64
     --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64)
rm -rf .whl-ray && mkdir -p .whl-ray/full
"${get[@]}" -d .whl-ray/full ray==2.60.0
"${get[@]}" -d .whl-ray jsonschema==4.26.0 jsonschema-specifications==2025.9.1 \
  referencing==0.37.0 rpds-py==2026.9.1
python3 results/h200/tools/slim_ray_wheel.py .whl-ray/full/ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl .whl-ray
rm -rf .whl-ray/full
ls -l .whl-ray && du -cb .whl-ray/*.whl | tail -1
