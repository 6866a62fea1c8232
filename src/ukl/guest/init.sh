#!/bin/busybox sh
# The guest's /init: the same for every program.  What a run needs beyond the
# program (volumes, published ports, tracing...) is in /etc/ukl, put there by
# `ukl run`'s features (src/ukl/guest/features/).
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
/bin/busybox mkdir -p /dev/shm
# What a distribution's /dev has (udev makes them): execveat() of a script
# names it to the interpreter as /dev/fd/N.
/bin/busybox ln -s /proc/self/fd /dev/fd
/bin/busybox mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /dev/shm
/bin/busybox mount -t tmpfs tmpfs /tmp
/bin/busybox --install -s /bin
export PATH=/bin
ip link set lo up
# The kernel has configured eth0 already when given ip=... (as urunc boots it).
grep -qE '(^| )ip=' /proc/cmdline ||
  { ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2; }
mkdir -p /run
# The program's output, its errors and its status each have a serial port,
# unless the machine has only the console.
if [ -e /etc/ukl/one-console ]; then
  ukl_out=console ukl_err=console ukl_status=console
else
  ukl_out=ttyS1 ukl_err=ttyS2 ukl_status=ttyS3
fi
# How the machine ends after the program: reboot (QEMU under `ukl run`
# exits), or what a deployed image was told (--on-exit).
ukl_on_exit=reboot
# A setup hook that cannot go on ends the run with MESSAGE and STATUS (default 1).
ukl_fail() {
  echo "ukl: error: $1" >/dev/$ukl_err
  echo "status ${2:-1}" >/dev/$ukl_status
  sync
  $ukl_on_exit -f
}
hooks() {
  local hook
  for hook in /etc/ukl/$1.d/*; do [ -e "$hook" ] && . "$hook"; done
}
hooks setup
[ $ukl_out = console ] || [ -p /dev/$ukl_out ] || { stty -F /dev/$ukl_out raw -echo; stty -F /dev/$ukl_err raw -echo; }
cd /tmp
program=$(cat /etc/ukl/program)
eval "set -- $(cat /etc/ukl/command)"
echo "ukl: starting $program"
"$@" </dev/null >/dev/$ukl_out 2>/dev/$ukl_err
status=$?
echo "ukl: $program exited with status $status"
hooks finish
echo "status $status" >/dev/$ukl_status
hooks exit
sync
$ukl_on_exit -f
