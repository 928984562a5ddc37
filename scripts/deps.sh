#!/usr/bin/env bash
# Installs the programs leakbench's local stack runs (PostgreSQL 15 and
# PgBouncer) when they are missing. On Debian/Ubuntu as root it uses apt-get;
# elsewhere it says exactly what to install and fails.
set -euo pipefail

have_pg() {
	command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}
have_pgbouncer() {
	command -v pgbouncer >/dev/null 2>&1 || test -x /usr/sbin/pgbouncer
}

missing=()
have_pg || missing+=(postgresql-15)
have_pgbouncer || missing+=(pgbouncer)
# The docker provider makes its Debian base image with debootstrap where no registry answers.
command -v apt-get >/dev/null 2>&1 && command -v docker >/dev/null 2>&1 && ! command -v debootstrap >/dev/null 2>&1 && ! test -x /usr/sbin/debootstrap && missing+=(debootstrap)
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	echo "installing ${missing[*]} with apt-get…"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	# The packages start system services on some images; leakbench runs its
	# own servers on free ports and needs none of them.
	for svc in postgresql pgbouncer; do
		if command -v service >/dev/null 2>&1; then service "$svc" stop >/dev/null 2>&1 || true; fi
	done
	exit 0
fi

echo "leakbench needs: ${missing[*]}" >&2
echo "  Debian/Ubuntu: sudo apt-get install ${missing[*]}" >&2
echo "  Fedora/RHEL:   sudo dnf install postgresql-server pgbouncer" >&2
echo "  macOS:         brew install postgresql@15 pgbouncer" >&2
exit 1
