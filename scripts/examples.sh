#!/usr/bin/env bash
# Regenerates reports/examples/ from real sign-offs and puts their tables
# into README.md, so that the README's figures are always the examples'.
#
#   make examples                 # ci and incident (about 9 minutes on 2 cores)
#   EXAMPLES="ci" make examples   # only ci (about 90 s)
#
# Each example is a real `leakbench signoff` on this machine; its report.md,
# report.html, compare.json, junit.xml and plots/ replace the committed ones
# only when the sign-off passed. The README holds each example's table
# between <!-- example:NAME --> and <!-- /example:NAME --> markers.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${LEAKBENCH_BIN:-bin/leakbench}
examples=${EXAMPLES:-ci incident}
work=$(mktemp -d "${TMPDIR:-/tmp}/leakbench-examples.XXXXXX")
trap 'rm -rf "$work"' EXIT

for name in $examples; do
	echo "== example $name: leakbench signoff --profile $name"
	out="$work/$name"
	if ! "$bin" signoff --profile "$name" --out "$out"; then
		echo "examples: the $name sign-off did not pass; reports/examples/$name-signoff is left as it was" >&2
		exit 1
	fi
	dest="reports/examples/$name-signoff"
	rm -rf "$dest.new"
	mkdir -p "$dest.new/plots"
	cp "$out"/report.md "$out"/report.html "$out"/compare.json "$out"/junit.xml "$dest.new/"
	cp "$out"/plots/*.png "$dest.new/plots/"
	rm -rf "$dest"
	mv "$dest.new" "$dest"
	# The README gets the example's first table (the before/after figures).
	table=$(awk '/^\|/{p=1; print; next} p{exit}' "$dest/report.md")
	TABLE="$table" NAME="$name" python3 - <<'PY'
import os, re
name, table = os.environ["NAME"], os.environ["TABLE"]
path = "README.md"
text = open(path, encoding="utf-8").read()
pat = re.compile(r"(<!-- example:%s -->\n).*?(\n<!-- /example:%s -->)" % (re.escape(name), re.escape(name)), re.S)
if not pat.search(text):
    raise SystemExit("README.md has no <!-- example:%s --> markers" % name)
open(path, "w", encoding="utf-8").write(pat.sub(lambda m: m.group(1) + table + m.group(2), text))
PY
	echo "== example $name: reports/examples/$name-signoff and README.md updated"
done
