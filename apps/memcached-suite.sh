#!/bin/sh
# Memcached's t/ suite inside the guest, for `ukl suite memcached`:
#   memcached-suite.sh TREE TIMEDRUN PROGRAM FILE...
# TREE is the built source (read-only), PROGRAM the server as the guest
# runs it (/app/memcached-debug).  Each test file runs under prove (not
# -v: some print 100 MB of "ok" lines, minutes on a serial port), from a
# directory where, as in the build tree, ./memcached-debug is PROGRAM,
# ./timedrun TIMEDRUN and t/ the tests: the tests start their servers
# themselves.  Perl is the host's, from its /usr mounted read-only.
tree=$1 timedrun=$2 program=$3
shift 3
# The host's dynamic loader and libraries where its programs look for them.
# (Debian 12's /usr is merged: /lib and /lib64 are links into it.)
for dir in lib lib64; do
  [ -e /$dir ] || ln -s /usr/$dir /$dir
done
# The host's tools come first: GNU timeout kills a hung file's servers too.
export PATH=/usr/bin:/bin HOME=/tmp LC_ALL=C
prove -V >/dev/null 2>&1 || { echo "ukl-suite: the host's prove does not run in the guest" >&2; exit 1; }
work=/tmp/memcached-suite
mkdir -p $work && cd $work || exit 1
ln -s "$tree/t" t
ln -s "$program" memcached-debug
ln -s "$timedrun" timedrun
# What the tests execute: the kernel's linked program (binfmt_ukl's file), or an ELF.
echo "ukl-suite: program: $(head -c 4 "$program" | tail -c 3)"
for file; do
  echo "ukl-suite: start $file"
  timeout 900 prove "t/$file" >/tmp/prove.out 2>&1
  status=$?
  cat /tmp/prove.out
  # A file killed midway leaves its extstore files in /tmp, which is memory.
  rm -f /tmp/extstore* /tmp/memcachetest*
  if [ $status != 0 ]; then
    result=failed
  elif grep -q "^t/$file \.* skipped" /tmp/prove.out; then
    result=skipped
  else
    result=passed
  fi
  printf '\nukl-suite: %s %s\n' "$file" "$result"
done
