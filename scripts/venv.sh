# scripts/venv.sh — sourced by the scripts that install pinned Python packages into a venv of
# their own under $HOOKFORGE_CACHE (torch.sh, tensorboard.sh, peers.sh). A venv counts as
# installed once its stamp file exists, so an install that was interrupted starts over.

venv_installed() {  # VENV
  [ -f "$1/.hookforge-installed" ]
}

venv_create() {  # VENV WHAT: a new, empty venv at VENV; WHAT names its contents in the message
  local python=${PYTHON:-python3}
  command -v "$python" >/dev/null || { echo "hookforge: $python not found (Debian: python3, python3-venv)" >&2; exit 1; }
  echo "hookforge: installing $2 into $1" >&2
  rm -rf "$1"
  mkdir -p "$(dirname "$1")"
  "$python" -m venv "$1" >&2 || { echo "hookforge: '$python -m venv' failed (Debian: python3-venv)" >&2; exit 1; }
}

venv_pip() {  # VENV ARG...: pip install ARG... into VENV, quietly
  local venv=$1
  shift
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$@" >&2
}

venv_done() {  # VENV
  touch "$1/.hookforge-installed"
}
