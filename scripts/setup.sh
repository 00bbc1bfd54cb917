#!/usr/bin/env bash
# Set up a development machine from scratch: a project-local virtualenv with skillmake and its
# test tools, and the real claude and codex CLIs in a project-local npm folder (.tools/npm).
# Idempotent: running it again only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

# Headless Chromium for the viewer's browser tests (tests/browser): Debian's package, never a downloaded build.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "setup: could not install chromium; the browser tests will be skipped (they fail under CI=true)" >&2
fi

# The agent CLIs used by the end-to-end tests (pinned; bump on purpose).
CLAUDE_CODE_VERSION=2.1.328
CODEX_VERSION=0.169.0
if [ "${SKILLMAKE_SKIP_NPM:-}" != "1" ]; then
  if command -v npm >/dev/null 2>&1; then
    if [ ! -x .tools/npm/node_modules/.bin/claude ] || [ ! -x .tools/npm/node_modules/.bin/codex ]; then
      mkdir -p .tools/npm
      npm install --prefix .tools/npm --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" "@openai/codex@${CODEX_VERSION}"
    fi
  else
    echo "setup: npm not found; the claude/codex end-to-end tests will be skipped (they fail under CI=true)" >&2
  fi
fi

# The real seed tools, for the differential tests (tests/differential): their own venv, so their
# dependencies never mix with ours. Pinned to the versions the seed reference documents describe.
CLAUDITOR_VERSION=0.1.3
CALIPER_VERSION=0.1.0
if [ "${SKILLMAKE_SKIP_SEEDTOOLS:-}" != "1" ]; then
  SEED=.tools/seedtools
  if ! "$SEED/bin/python" -c "import importlib.metadata as m; assert m.version('clauditor-eval') == '${CLAUDITOR_VERSION}'; assert m.version('caliper-eval') == '${CALIPER_VERSION}'" 2>/dev/null; then
    if [ ! -x "$SEED/bin/python" ]; then
      "$PYTHON" -m venv "$SEED"
    fi
    "$SEED/bin/python" -m pip install --quiet --disable-pip-version-check \
      "clauditor-eval==${CLAUDITOR_VERSION}" "caliper-eval==${CALIPER_VERSION}" \
      || echo "setup: could not install the seed tools; the differential tests will be skipped (they fail under CI=true)" >&2
  fi
fi
