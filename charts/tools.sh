#!/usr/bin/env bash
# helm and promtool, which make test and make chart-check need, found or put
# in place without changing the machine: a tool in .tools/bin (git-ignored) or
# on PATH is used as it is; otherwise it goes into .tools/bin from Debian's
# package, downloaded and unpacked in place (apt-get download + dpkg -x: no
# install, no root, no service), or is built from the Go module proxy at a
# pinned version. When neither works it says exactly what to install.
# TOOLS_SKIP_PATH=1 ignores tools on PATH (to try the install routes); after a
# change of the pinned versions, rm -rf .tools to get them.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/.tools/bin
mkdir -p "$bin"

HELM_MODULE=helm.sh/helm/v3/cmd/helm@v3.22.0
# Prometheus 3.16.0; its Go module numbers releases v0.<major><minor>.<patch>.
PROMTOOL_MODULE=github.com/prometheus/prometheus/cmd/promtool@v0.316.0

found() {
  [ -x "$bin/$1" ] && return 0
  [ "${TOOLS_SKIP_PATH:-}" = 1 ] && return 1
  command -v "$1" >/dev/null
}

# from_deb PACKAGE PATH-IN-PACKAGE: Debian's build, unpacked into .tools.
from_deb() {
  command -v apt-get >/dev/null && command -v dpkg >/dev/null || return 1
  local tmp rc=0
  tmp=$(mktemp -d)
  if (cd "$tmp" && apt-get download -q "$1" >/dev/null 2>&1); then
    dpkg -x "$tmp"/"$1"_*.deb "$tmp/root" && install -m 0755 "$tmp/root$2" "$bin/" || rc=1
  else
    rc=1
  fi
  rm -rf "$tmp"
  return $rc
}

from_go() {
  command -v go >/dev/null || return 1
  echo "tools: building $1 from the Go module proxy into .tools/bin (once, a few minutes)" >&2
  GOBIN=$bin go install "$1"
}

if ! found promtool; then
  from_deb prometheus /usr/bin/promtool || from_go "$PROMTOOL_MODULE" || {
    cat >&2 <<MSG
tools: promtool is missing and could not be put in .tools/bin (Debian's package
could not be downloaded, nor $PROMTOOL_MODULE built).
Install one of:
  - Debian/Ubuntu: sudo apt-get install prometheus   (or as any user after an
    apt-get update: apt-get download prometheus && dpkg -x prometheus_*.deb x
    && cp x/usr/bin/promtool .tools/bin/)
  - GOBIN=\$PWD/.tools/bin go install $PROMTOOL_MODULE   (needs the Go module proxy)
  - a promtool 2.42 or newer from https://github.com/prometheus/prometheus/releases on PATH
MSG
    exit 1
  }
fi
if ! found helm; then
  from_go "$HELM_MODULE" || {
    cat >&2 <<MSG
tools: helm is missing and could not be built ($HELM_MODULE).
Install one of:
  - GOBIN=\$PWD/.tools/bin go install $HELM_MODULE   (needs the Go module proxy)
  - helm 3 from https://helm.sh/docs/intro/install/ on PATH
MSG
    exit 1
  }
fi
# jq runs docs/quickstart.md in the tests (cmd/pmapi TestQuickstart); where the
# machine has none, gojq (a jq written in Go, the same language for what the
# guide uses) stands in as .tools/bin/jq. curl, the guide's other tool, is
# taken as given.
GOJQ_MODULE=github.com/itchyny/gojq/cmd/gojq@v0.12.17
if ! found jq; then
  { from_go "$GOJQ_MODULE" && ln -sf gojq "$bin/jq"; } || {
    cat >&2 <<MSG
tools: jq is missing and gojq could not be built ($GOJQ_MODULE).
Install one of:
  - Debian/Ubuntu: sudo apt-get install jq
  - GOBIN=\$PWD/.tools/bin go install $GOJQ_MODULE && ln -s gojq .tools/bin/jq
MSG
    exit 1
  }
fi
# Chromium runs the console's browser test (console/browser_test.go) and the
# /docs rendering test; make test sets PMAPI_BROWSER_TESTS=require, so they
# fail rather than skip without it. Debian's package, installed with apt-get
# as root (a browser cannot be unpacked in place as the tools above are: it
# needs its shared libraries); as another user, it says what to install.
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && ! command -v google-chrome >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "tools: installing Chromium (apt-get install chromium) for the browser tests, once" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >&2 || {
      echo "tools: apt-get install chromium failed; install Chromium and run make test again" >&2
      exit 1
    }
  else
    cat >&2 <<MSG
tools: Chromium is missing; the console's browser test needs it.
Install one of:
  - Debian/Ubuntu: sudo apt-get install chromium   (Ubuntu: chromium-browser)
  - Google Chrome, as google-chrome on PATH
MSG
    exit 1
  fi
fi
