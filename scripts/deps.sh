#!/usr/bin/env bash
# Installs the programs leakbench's local stack runs (PostgreSQL 15 and
# PgBouncer) when they are missing. On Debian/Ubuntu as root it uses apt-get;
# elsewhere it says exactly what to install and fails.
#
# It touches only what it installs: while apt-get runs, a temporary
# /usr/sbin/policy-rc.d (exit 101, "action forbidden") keeps the packages'
# services from starting — leakbench runs its own servers on free ports and
# needs none of them — and it is removed when this script ends, however it
# ends. A policy-rc.d that was already there is the host's and is left as it
# is (then services start as it says). No service is ever stopped.
#
# Environment, for tests only: LEAKBENCH_DEPS_ROOT (default: empty, i.e. /)
# is prefixed to the system paths this script probes (/usr/lib/postgresql,
# /usr/sbin) and to the policy-rc.d it writes.
set -euo pipefail

root="${LEAKBENCH_DEPS_ROOT:-}"

have_pg() {
	command -v initdb >/dev/null 2>&1 || ls "$root"/usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}
have_pgbouncer() {
	command -v pgbouncer >/dev/null 2>&1 || test -x "$root/usr/sbin/pgbouncer"
}

missing=()
have_pg || missing+=(postgresql-15)
have_pgbouncer || missing+=(pgbouncer)
# The docker provider makes its Debian base image with debootstrap where no registry answers.
command -v apt-get >/dev/null 2>&1 && command -v docker >/dev/null 2>&1 && ! command -v debootstrap >/dev/null 2>&1 && ! test -x "$root/usr/sbin/debootstrap" && missing+=(debootstrap)
# The tests' service of the users' own stack (examples/pyservice): FastAPI,
# SQLAlchemy and psycopg2 served by uvicorn, Debian's packages for the
# system python3 (a pyenv python on PATH does not see them).
if command -v apt-get >/dev/null 2>&1 && [ -z "$root" ] && ! /usr/bin/python3 -c 'import fastapi, sqlalchemy, psycopg2, uvicorn' >/dev/null 2>&1; then
	missing+=(python3-fastapi python3-sqlalchemy python3-psycopg2 python3-uvicorn)
fi
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	policy="$root/usr/sbin/policy-rc.d"
	marker="written by leakbench scripts/deps.sh (pid $$)"
	# Remove the policy only if it is still the one this run wrote.
	remove_policy() {
		if grep -qF "$marker" "$policy" 2>/dev/null; then rm -f "$policy"; fi
	}
	trap remove_policy EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM HUP
	# noclobber: never overwrite a policy-rc.d someone else put there.
	if [ -e "$policy" ] || [ -L "$policy" ]; then
		echo "note: $policy exists (the host's); leaving it as it is, so services start as it says" >&2
	elif (set -C; printf '#!/bin/sh\n# %s while it installs packages; removed when it ends.\n# 101: action forbidden, so no service of the packages starts.\nexit 101\n' "$marker" >"$policy") 2>/dev/null; then
		chmod 755 "$policy"
	else
		echo "warning: could not write $policy; the packages' services may start (leakbench does not need them and does not stop them)" >&2
	fi
	echo "installing ${missing[*]} with apt-get…"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	exit 0
fi

echo "leakbench needs: ${missing[*]}" >&2
echo "  Debian/Ubuntu: sudo apt-get install ${missing[*]}" >&2
echo "  Fedora/RHEL:   sudo dnf install postgresql-server pgbouncer" >&2
echo "  macOS:         brew install postgresql@15 pgbouncer" >&2
exit 1
