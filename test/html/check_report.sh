#!/usr/bin/env bash
# check_report.sh REPORT.html: loads a `kite inspect --html` page in headless
# Chromium and checks the DOM after its script ran: the script's ready marker
# (id="kite-ready", added last, so a JS exception leaves it out), every
# section, and no uncaught JS error on the console.
#
# Exit statuses: 0 the page is fine, 1 it is not (what failed is printed),
# 2 a usage error, 77 Chromium is not installed (skipped; CI installs it).

set -u

if [[ $# -ne 1 ]]; then
  echo "usage: $0 REPORT.html" >&2
  exit 2
fi
report=$1
if [[ ! -f $report ]]; then
  echo "error: no such file: $report" >&2
  exit 1
fi
report=$(realpath "$report")

browser=""
for candidate in chromium chromium-browser; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser=$candidate
    break
  fi
done
if [[ -z $browser ]]; then
  echo "SKIP: neither chromium nor chromium-browser is on PATH (apt-get install chromium)"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A fresh profile each run; no network, updates or sync: the page needs none.
# --no-sandbox because CI runs as root. --enable-logging=stderr puts console
# messages ("Uncaught ...") on stderr.
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic \
  --no-first-run --disable-background-networking --disable-component-update \
  --disable-sync --enable-logging=stderr --v=0 \
  --user-data-dir="$work/profile" --dump-dom "file://$report" \
  >"$work/dom.html" 2>"$work/stderr.txt"
status=$?
if [[ $status -ne 0 ]]; then
  if [[ $status -eq 124 ]]; then
    echo "FAIL: $browser timed out after 60 seconds"
  else
    echo "FAIL: $browser exited with status $status"
  fi
  tail -n 20 "$work/stderr.txt"
  exit 1
fi

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

grep -q 'id="kite-ready"' "$work/dom.html" ||
  fail 'no id="kite-ready": the page script did not finish (a JS error?)'
for id in summary source stages cuda resources config roofline; do
  grep -q "<section id=\"$id\"" "$work/dom.html" || fail "no section id=\"$id\""
done
# An exception no handler caught, at load or later, logs "Uncaught ...".
if grep 'Uncaught' "$work/stderr.txt" >"$work/errors.txt"; then
  fail "JS errors on the console:"
  cat "$work/errors.txt"
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed for $report"
  exit 1
fi
echo "PASS: $report"
exit 0
