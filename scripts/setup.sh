#!/usr/bin/env bash
# Install what Strider needs on Debian 12 (idempotent): Debian packages for
# the C++ build, and a project virtualenv (.venv) with pinned Python tools.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

APT_PACKAGES=(
  build-essential cmake ninja-build git
  libonnx-dev libprotobuf-dev protobuf-compiler
  llvm-14-dev llvm-14-tools
  libgtest-dev libgmock-dev libhwy-dev libdlpack-dev libonnx-testdata
  clang-14 libclang-rt-14-dev
  python3-venv
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    -o DPkg::Lock::Timeout=300 "${missing[@]}" >/dev/null
fi

# Python: pinned tools in a project venv. Prefer the python3 on PATH (the
# machine's 3.11); the venv is recreated if its interpreter disappeared.
PY="${STRIDER_PYTHON:-python3}"
VENV="$ROOT/.venv"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import sys" 2>/dev/null; then
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
fi
REQ="$ROOT/scripts/requirements.txt"
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$want" ]; then
  echo "setup: installing Python packages into .venv"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"
  echo "$want" > "$STAMP"
fi
echo "setup: ok"
