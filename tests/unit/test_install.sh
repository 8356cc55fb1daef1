#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: `make install DESTDIR=...` from the build directory puts every
# file of the package in place (the eight tools and their pages, wrtrace,
# nicinfo and their pages, libwrtrace.so, perftest_plugin.h and
# perftest-plugin.pc), and a plugin author needs nothing else: the example
# plugin builds against the installed header found through the installed .pc
# file, and exports its entry point.
# The install directories come from the Makefile (packaging.am passes them in
# PT_bindir, PT_man1dir, PT_includedir, PT_pluginsdir, PT_pkgconfigdir).
set -u
src=${srcdir:-.}
top=${top_builddir:-.}
CC=${CC:-cc}
MAKE=${MAKE:-make}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }
check() { # check DESCRIPTION COMMAND...: one result, the command's output as diagnostics
	local d=$1; shift
	if "$@" >"$tmp/out" 2>&1; then ok "$d"; else not_ok "$d"; tail -n 20 "$tmp/out" | diag; fi
}

TOOLS="ib_send_bw ib_send_lat ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_atomic_bw ib_atomic_lat"
for v in PT_bindir PT_man1dir PT_includedir PT_pluginsdir PT_pkgconfigdir; do
	[ -n "${!v:-}" ] || { echo "Bail out! $v not set (run through make check)"; exit 1; }
done
echo "1..$((2 * 8 + 12))"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root

# The outer make's flags (jobserver, -s, VERBOSE=...) are not this make's.
if (cd "$top" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $MAKE install DESTDIR="$root") \
	>"$tmp/install.log" 2>&1; then
	ok "make install DESTDIR=... succeeds"
else
	not_ok "make install DESTDIR=... succeeds"
	tail -n 30 "$tmp/install.log" | diag
fi

for t in $TOOLS; do
	# -h exits 1, as upstream's does: the usage naming the tool is the check
	check "$PT_bindir/$t is installed and runs (-h)" \
		sh -c "'$root$PT_bindir/$t' -h 2>&1 | grep -E '^ +$t <host> '"
	check "$PT_man1dir/$t.1 is installed" test -s "$root$PT_man1dir/$t.1"
done
check "$PT_bindir/wrtrace is installed and runs (--help)" "$root$PT_bindir/wrtrace" --help
check "$PT_man1dir/wrtrace.1 is installed" test -s "$root$PT_man1dir/wrtrace.1"
check "$PT_bindir/nicinfo is installed and runs (--help)" "$root$PT_bindir/nicinfo" --help
check "$PT_man1dir/nicinfo.1 is installed" test -s "$root$PT_man1dir/nicinfo.1"
check "$PT_pluginsdir/libwrtrace.so is installed and exports perftest_plugin_ops" \
	sh -c "nm -D --defined-only '$root$PT_pluginsdir/libwrtrace.so' | grep -E ' T perftest_plugin_ops(@|\$)'"
check "$PT_includedir/perftest_plugin.h is installed, the same as plugin/perftest_plugin.h" \
	cmp "$src/plugin/perftest_plugin.h" "$root$PT_includedir/perftest_plugin.h"
pc=$root$PT_pkgconfigdir/perftest-plugin.pc
check "$PT_pkgconfigdir/perftest-plugin.pc is installed" test -s "$pc"

# pkg-config sees the installed tree only: PKG_CONFIG_LIBDIR replaces the
# system's search path, and the sysroot relocates the .pc file's paths (unlike
# --define-prefix it also holds for multiarch libdirs such as Debian's).
pkgconf() { PKG_CONFIG_LIBDIR=$root$PT_pkgconfigdir PKG_CONFIG_PATH= PKG_CONFIG_SYSROOT_DIR=$root \
	PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 ${PKG_CONFIG:-pkg-config} "$@"; }
cflags=$(pkgconf --cflags perftest-plugin 2>"$tmp/err")
rc=$?
case " $cflags " in *" -I$root$PT_includedir "*) ;; *) rc=1 ;; esac
if [ $rc -eq 0 ]; then
	ok "pkg-config --cflags perftest-plugin names the installed header's directory"
else
	not_ok "pkg-config --cflags perftest-plugin names the installed header's directory"
	{ echo "cflags: '$cflags', expected -I$root$PT_includedir"; cat "$tmp/err"; } | diag
fi
# pkgconf prefixes variables with the sysroot, freedesktop's pkg-config does not
pdir=$(pkgconf --variable=pluginsdir perftest-plugin 2>"$tmp/err")
pdir=${pdir#"$root"}
if [ "$pdir" = "$PT_pluginsdir" ] && [ -f "$root$pdir/libwrtrace.so" ]; then
	ok "pkg-config --variable=pluginsdir names the directory of libwrtrace.so"
else
	not_ok "pkg-config --variable=pluginsdir names the directory of libwrtrace.so"
	{ echo "pluginsdir: '$pdir', expected $PT_pluginsdir"; cat "$tmp/err"; } | diag
fi

# The example plugin, alone in a directory, with the .pc file's flags only;
# -H lists the headers it read: perftest_plugin.h must be the installed one.
mkdir "$tmp/plugbuild" && cp "$src/plugin/examples/count_plugin.c" "$tmp/plugbuild/"
if (cd "$tmp/plugbuild" && $CC -std=c99 -pedantic -Wall -Wextra -Werror -shared -fPIC $cflags -H \
	-o count_plugin.so count_plugin.c) 2>"$tmp/err" &&
	grep -qE "^\.+ $root$PT_includedir/+perftest_plugin\.h\$" "$tmp/err"; then
	ok "count_plugin.c builds against the installed perftest_plugin.h"
else
	not_ok "count_plugin.c builds against the installed perftest_plugin.h"
	{ echo "cflags: $cflags"; grep -v '^\.' "$tmp/err"; grep -E '^\.+ .*perftest_plugin\.h$' "$tmp/err" | sed 's/^\.* /read: /'; } | diag
fi
check "the plugin built from the installed header exports perftest_plugin_ops" \
	sh -c "nm -D --defined-only '$tmp/plugbuild/count_plugin.so' | grep -E ' T perftest_plugin_ops\$'"
exit 0
