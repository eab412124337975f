#!/usr/bin/env bash
# Make /opt/venv with torch and the test runner. Used by the Dockerfile's `venv` stage (from the
# indexes) and by `harness build`'s install container for a wheelhouse (which the container
# mounts read-only at the given path, so no image layer ever holds the wheels).
#
#   install-venv.sh PYTHON TORCH_SPEC "TEST PACKAGES" index TORCH_INDEX_URL [PACKAGE_INDEX_URL]
#   install-venv.sh PYTHON TORCH_SPEC "TEST PACKAGES" wheelhouse DIR
set -euo pipefail
python="$1" torch_spec="$2" source="$4" where="$5" package_index="${6:-}"
read -ra tests <<<"$3"
"${python}" -m venv /opt/venv
pip=(/opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check)
if [ "${source}" = wheelhouse ]; then
  # torch comes from the wheelhouse only: no index at all, so nothing can be swapped in silently.
  "${pip[@]}" --no-index --find-links "${where}" "${torch_spec}" "${tests[@]}"
else
  # torch from its backend's own index (PyPI's default torch is the CUDA 13.0 build since 2.11,
  # so cu126 must never fall back to it); the test runner from the package index.
  "${pip[@]}" --index-url "${where}" "${torch_spec}"
  "${pip[@]}" ${package_index:+--index-url "${package_index}"} "${tests[@]}"
fi
