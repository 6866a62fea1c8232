#!/bin/sh
# postgres-link.sh CC JOBS NAME=DIR...: link loadable modules into the server,
# where postgres-linked-libraries.patch finds them by name.  Each module's
# shared library (DIR/NAME.so, or DIR/NAME.o for one of a directory's
# single-file modules) is made one relocatable object instead, its _PG_init and
# Pg_magic_func renamed as its own (every module defines both), and a table
# of its exported functions generated; then the server is linked with them.
set -eu
cc=$1 jobs=$2
shift 2
out=$PWD/linked
rm -rf "$out"
mkdir -p "$out"
table=$out/linked_libraries.c
symbols() {         # the global functions an object defines
  nm -g --defined-only "$1" | awk '$2 == "T" { print $3 }'
}
{
  echo '#include <stddef.h>'
  echo 'typedef struct { const char *name; void *address; } LinkedSymbol;'
  echo 'typedef struct { const char *library; const LinkedSymbol *symbols; } LinkedLibrary;'
} >"$table"
objects=
for module; do
  name=${module%%=*} dir=${module#*=}
  case $dir in
    *.o) make -C "${dir%/*}" "${dir##*/}"
         lib=$dir ;;
    *)   make -j"$jobs" -C "$dir" "$name.so" LINK.shared='gcc -r -nostdlib' LDFLAGS_SL=
         lib=$dir/$name.so ;;
  esac
  obj=$out/$name.o
  objcopy --redefine-sym "_PG_init=${name}__PG_init" \
    --redefine-sym "Pg_magic_func=${name}_Pg_magic_func" "$lib" "$obj"
  objects="$objects $obj"
  symbols "$obj" | awk '{ print "extern void " $1 "(void);" }' >>"$table"
  echo "static const LinkedSymbol ${name}_symbols[] = {" >>"$table"
  symbols "$obj" | awk -v lib="$name" '{
    orig = $1
    if (orig == lib "__PG_init") orig = "_PG_init"
    if (orig == lib "_Pg_magic_func") orig = "Pg_magic_func"
    printf "  { \"%s\", (void *) %s },\n", orig, $1 }' >>"$table"
  echo '  { NULL, NULL }' >>"$table"
  echo '};' >>"$table"
done
echo 'const LinkedLibrary linked_libraries[] = {' >>"$table"
for module; do
  echo "  { \"${module%%=*}\", ${module%%=*}_symbols }," >>"$table"
done
echo '  { NULL, NULL }' >>"$table"
echo '};' >>"$table"
"$cc" -O2 -c "$table" -o "$out/linked_libraries.o"
# zic first: the backend's make builds it too, and must not link it with these.
make -j"$jobs" -C src/timezone
rm -f src/backend/postgres
make -j"$jobs" -C src/backend all LDFLAGS_EX="$out/linked_libraries.o$objects"
