#!/usr/bin/env bash
# cpython.sh - CPython's own regression tests, natively and inside pyvisor.
#
# Usage: tests/conformance/cpython.sh [--pyvisor PATH] [--modules "M1 M2 ..."]
#                                     [--out FILE.md] [--json FILE] [--quick]
#
# Runs each test module (Debian package libpython3.11-testsuite) twice as
# the same unprivileged user: natively with /usr/bin/python3, and inside
# `pyvisor run`.  Both runs use tests/conformance/runner.py, which prints
# one JSON line per module with the outcome of every test.  compare.py then
# writes the per-module table (FILE.md, default: stdout only) and lists
# every test that passes natively but not inside, with its reason.
#
# Exit status: 0 when every difference has a known reason (compare.py's
# REASONS), 1 when some difference is unexplained, 77 when the test suite
# is not installed, 2 on usage errors.
#
# As root the runs switch to the user pyvisor-test (else nobody) with
# setpriv; otherwise they run as the current user.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
pyvisor="$here/../../build/pyvisor"
out=""
json=""
# The modules issue 3 names; --quick runs the fast subset ctest uses.
modules="test_os test_posix test_shutil test_tempfile test_pathlib test_glob test_fileio
test_io test_zipfile test_tarfile test_csv test_sqlite3 test_mmap test_stat test_fnmatch
test_genericpath test_posixpath test_filecmp test_fcntl"
quick="test_stat test_fnmatch test_genericpath test_posixpath test_filecmp test_glob
test_fileio test_csv test_shutil test_tempfile test_os test_posix test_pathlib test_mmap test_fcntl"

while [ $# -gt 0 ]; do
	case "$1" in
	--pyvisor) pyvisor=$2; shift 2 ;;
	--modules) modules=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--json) json=$2; shift 2 ;;
	--quick) modules=$quick; shift ;;
	-h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "cpython.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

if [ ! -f /usr/lib/python3.11/test/test_os.py ]; then
	echo "cpython.sh: libpython3.11-testsuite is not installed (scripts/deps.sh)" >&2
	exit 77
fi
if [ ! -x "$pyvisor" ]; then
	echo "cpython.sh: no pyvisor binary at $pyvisor (build first or pass --pyvisor)" >&2
	exit 2
fi
pyvisor=$(cd "$(dirname "$pyvisor")" && pwd)/$(basename "$pyvisor")

as_user=()
if [ "$(id -u)" -eq 0 ]; then
	user=pyvisor-test
	id "$user" >/dev/null 2>&1 || user=nobody
	as_user=(setpriv --reuid="$user" --regid="$user" --clear-groups --reset-env)
fi

work=$(mktemp -d /tmp/pyvisor-conf.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$here/runner.py" "$work/runner.py"
chmod 755 "$work"
chmod 644 "$work/runner.py"
[ "${#as_user[@]}" -gt 0 ] && chown "$user" "$work"

native="$work/native.jsonl"
inside="$work/inside.jsonl"
: >"$native"
: >"$inside"
for m in $modules; do
	echo "cpython.sh: $m native" >&2
	(cd "$work" && timeout 900 "${as_user[@]}" env HOME="$work" TMPDIR=/tmp \
		/usr/bin/python3 -B "$work/runner.py" "$m" 2>/dev/null | grep '^{' >>"$native") || true
	echo "cpython.sh: $m inside pyvisor" >&2
	# The limits are raised to the suite's needs (its large-file tests
	# write sparse files past 2 and 4 GiB): this run measures the view,
	# not the default limits, which have their own tests.
	(cd "$work" && timeout 960 "${as_user[@]}" "$pyvisor" run --timeout 900 \
		--cpu-seconds 900 --max-file-size 16G --disk-quota 16G --allow-exec id \
		--max-output 268435456 "$work/runner.py" "$m" 2>/dev/null |
		grep '^{' >>"$inside") || true
done

args=(--native "$native" --inside "$inside" --modules "$modules")
[ -n "$out" ] && args+=(--out "$out")
[ -n "$json" ] && args+=(--json "$json")
/usr/bin/python3 -B "$here/compare.py" "${args[@]}"
