#!/bin/sh
# Installs what ukl needs on Debian 12, then the ukl command into .venv/.
set -eu
cd "$(dirname "$0")"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
	build-essential binutils flex bison bc libelf-dev libssl-dev ccache \
	qemu-system-x86 xz-utils rsync dpkg-dev git perl python3 python3-venv python3-pip \
	g++ cmake ninja-build \
	autoconf automake libtool patch redis-tools curl wrk gdb linux-libc-dev tcl \
	containerd postgresql-client-15 \
	ovmf mtools fdisk qemu-utils e2fsprogs bpftrace golang-go
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e '.[test,bench]'
echo "ukl is set up: .venv/bin/ukl run hello"
