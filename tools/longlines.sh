#!/usr/bin/env bash
# Lists the lines of hand-written Go longer than 120 characters (gofmt does not
# wrap them) and fails when there is one. Generated files (*.gen.go) are left
# out, and so is a struct field whose line ends in its tag: a tag is one string
# literal Go cannot split, and its doc text is the OpenAPI document's
# description.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z '*.go' | grep -zv '\.gen\.go$' | xargs -0 awk -v max=120 '
  length($0) > max && $0 !~ /`[a-z]+:"[^`]*`$/ {
    printf "%s:%d: %d characters\n", FILENAME, FNR, length($0)
    long = 1
  }
  END { exit long }'
