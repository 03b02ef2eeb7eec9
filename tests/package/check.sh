#!/bin/bash
# The .deb on a fresh machine (issue 22): install it with apt, check the
# version, gate a script (a PASS and a FAIL) as a normal user, start the
# desktop app under Xvfb and check what it drew, then apt remove it and check
# that nothing is left but the user's history.
#
#   tests/package/check.sh [--purge-build-deps] [DEB]
#
# Run as root on a throwaway machine: it installs and removes packages.
# make package-test runs it in a fresh Debian 12 chroot after make package.
# --purge-build-deps first removes what make deps installed (gcc, the -dev
# packages and, through autoremove, the GTK/GL/X11 libraries they pulled
# in), so that apt install has to bring the app's libraries through the
# package's Depends alone.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 LANG=C.UTF-8

purge=
if [ "${1:-}" = --purge-build-deps ]; then purge=1; shift; fi
deb=${1:-}
if [ -z "$deb" ]; then
	set -- build/diffgate_*.deb
	deb=$1
fi
[ -f "$deb" ] || { echo "check.sh: no package $deb (make package builds build/diffgate_*.deb)" >&2; exit 2; }
deb=$(readlink -f "$deb")
[ "$(id -u)" = 0 ] || { echo "check.sh: run as root on a throwaway machine (it installs and removes packages)" >&2; exit 2; }
cd / # the normal user below cannot enter root's folders

step() { echo; echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

step "the package: $deb"
dpkg-deb -f "$deb" Package Version Architecture Depends
dpkg-deb -c "$deb"
if dpkg-query -W -f='${Status}' diffgate 2>/dev/null | grep -q 'ok installed'; then
	fail "diffgate is installed already: start from a machine without it"
fi

if [ -n "$purge" ]; then
	step "remove the build dependencies (make deps) and what they pulled in"
	apt-get purge -y -qq gcc pkg-config libgl1-mesa-dev xorg-dev libgtk-3-dev >/dev/null
	apt-get autoremove --purge -y -qq >/dev/null
	if dpkg-query -W -f='${Status}' libgtk-3-0 2>/dev/null | grep -q 'ok installed'; then
		echo "note: libgtk-3-0 is still installed (something else needs it)"
	else
		ok "libgtk-3-0 is gone: apt install must bring it back through Depends"
	fi
fi

step "apt-get install $deb"
apt-get update -qq
apt-get install -y -qq "$deb" >/tmp/dg-check-apt.log 2>&1 || { cat /tmp/dg-check-apt.log; fail "apt-get install"; }
tail -3 /tmp/dg-check-apt.log
[ "$(command -v diffgate)" = /usr/bin/diffgate ] || fail "diffgate is not /usr/bin/diffgate"
[ -x /usr/bin/diffgate-app ] || fail "no /usr/bin/diffgate-app"
missing=$(ldd /usr/bin/diffgate-app | grep 'not found' || true)
[ -z "$missing" ] || fail "the app's libraries are missing after install (Depends incomplete): $missing"
ok "every library the app links is installed (ldd)"
for f in /usr/share/applications/diffgate.desktop /usr/share/icons/hicolor/512x512/apps/diffgate.png /usr/share/man/man1/diffgate.1.gz; do
	[ -s "$f" ] || fail "missing $f"
done
grep -qx 'Exec=diffgate-app' /usr/share/applications/diffgate.desktop || fail "the .desktop file does not start diffgate-app"
zcat /usr/share/man/man1/diffgate.1.gz | head -1 | grep -q '^\.TH DIFFGATE 1 ' || fail "the man page is not roff"
zcat /usr/share/man/man1/diffgate.1.gz | grep -q 'diffgate run' || fail "the man page lacks diffgate run"
ok "desktop file, icon and man page installed"

step "diffgate --version"
v=$(diffgate --version)
echo "$v"
[[ "$v" =~ ^diffgate\ v[0-9]+\.[0-9]+\.[0-9]+[^\ ]*\ \(commit\ [0-9a-f]{12}(,\ modified)?\)$ ]] || fail "diffgate --version: $v"
[ "$(diffgate version)" = "$v" ] || fail "diffgate version differs from --version"
av=$(diffgate-app --version)
[ "$av" = "$v" ] || fail "diffgate-app --version: $av, CLI: $v"
ok "CLI and app: $v"

step "diffgate run, as a normal user"
id dgcheck >/dev/null 2>&1 || useradd -m -s /bin/bash dgcheck
home=$(getent passwd dgcheck | cut -d: -f6)
as_user() { sudo -u dgcheck -H env -i HOME="$home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }
as_user mkdir -p "$home/ws/logs" "$home/scripts"
as_user sh -c "echo '{\"a\": 1}' >$home/ws/config.json"
as_user sh -c "printf '#!/bin/sh\necho built >>logs/run.log\n' >$home/scripts/pass.sh; printf '#!/bin/sh\necho built >>logs/run.log\necho \"{}\" >config.json\n' >$home/scripts/fail.sh; chmod +x $home/scripts/*.sh"
set +e
out=$(as_user diffgate run --workspace "$home/ws" --allow logs/ --report "$home/pass.json" -- "$home/scripts/pass.sh")
code=$?
set -e
[ $code = 0 ] && [ -z "$out" ] || fail "the passing script: exit $code, stdout: $out"
grep -q '"verdict": *"pass"' "$home/pass.json" || fail "pass.json has no pass verdict"
ok "PASS: exit 0, no finding"
set +e
out=$(as_user diffgate run --workspace "$home/ws" --allow logs/ --report "$home/fail.json" -- "$home/scripts/fail.sh")
code=$?
set -e
[ $code = 1 ] && [ "$out" = "CHANGED config.json" ] || fail "the failing script: exit $code, stdout: $out"
grep -q '"verdict": *"fail"' "$home/fail.json" || fail "fail.json has no fail verdict"
ok "FAIL: exit 1, $out"
hist="$home/.config/diffgate/history.db"
[ -s "$hist" ] || fail "no history at $hist"
n=$(as_user diffgate history list | grep -c 'pass.sh\|fail.sh' || true)
[ "$n" -ge 2 ] || fail "history list shows $n of the 2 runs"
ok "both runs recorded in $hist"

step "the desktop app under Xvfb"
apt-get install -y -qq --no-install-recommends xvfb xauth >/dev/null
shot="$home/shot.png"
set +e
as_user env DIFFGATE_NO_NATIVE_DIALOG=1 timeout 180 xvfb-run -a -s "-screen 0 1400x900x24" diffgate-app --screenshot "$shot" >/tmp/dg-check-app.log 2>&1
code=$?
set -e
[ $code = 0 ] || { cat /tmp/dg-check-app.log; fail "diffgate-app --screenshot: exit $code"; }
[ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$shot is not a PNG"
# IHDR: width and height, big-endian, at bytes 16 and 20.
w=$(od -An -j16 -N4 -tu1 "$shot" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
h=$(od -An -j20 -N4 -tu1 "$shot" | awk '{print $1*16777216+$2*65536+$3*256+$4}')
size=$(stat -c %s "$shot")
echo "screenshot ${w}x${h}, $size bytes"
[ "$w" -ge 1200 ] && [ "$h" -ge 780 ] || fail "the window is ${w}x${h}, want about 1400x900"
# A blank 1400x900 PNG is a few KB; the review view with its text and
# colours is well over 50 KB.
[ "$size" -ge 50000 ] || fail "the screenshot is $size bytes: it looks blank"
as_user diffgate history list | grep -q 'demo.sh' || fail "the app's demo run is not in the history"
ok "the app drew its window (${w}x${h}, $size bytes) and recorded its demo run"

step "apt-get remove diffgate"
dpkg -L diffgate >/tmp/dg-check-files
apt-get remove -y -qq diffgate >/dev/null
status=$(dpkg-query -W -f='${Status}' diffgate 2>/dev/null || true)
case "$status" in "" | *not-installed) ;; *) fail "after remove, dpkg says: $status" ;; esac
left=
while read -r f; do
	if [ -e "$f" ] && [ ! -d "$f" ]; then left="$left $f"; fi
done </tmp/dg-check-files
[ -z "$left" ] || fail "left behind:$left"
command -v diffgate >/dev/null && fail "diffgate is still on PATH"
for d in /usr/share/doc/diffgate /etc/diffgate /var/lib/diffgate /var/cache/diffgate /usr/share/diffgate; do
	[ ! -e "$d" ] || fail "left behind: $d"
done
ok "every file of dpkg -L is gone ($(wc -l </tmp/dg-check-files) entries), dpkg status: ${status:-unknown}"
[ -s "$hist" ] || fail "the user's history is gone"
ok "the user's history is kept: $hist"

echo
echo "PASS: the package installs, gates, draws and removes cleanly"
