#!/bin/sh
# postgres-link.sh CC JOBS MODULE...: link loadable modules into the server,
# where postgres-linked-libraries.patch finds them by name.  A MODULE is
#   NAME=DIR        DIR/NAME.so, built as one relocatable object;
#   NAME=DIR/F.o    one of a directory's single-file modules;
#   DIR/*           every module in DIR's subdirectories, each named as its own;
#   NAME=DIR+A...   DIR/NAME.so with the archives A... linked privately: they
#                   supply what the module takes from the first one (libpq for
#                   libpqwalreceiver) and keep the rest to themselves, so that
#                   the module still uses the server's own palloc-based helpers.
# Each object's _PG_init and Pg_magic_func are renamed as its own (every module
# defines both), a table of its exported functions is generated, and the
# server is linked with them.
set -eu
export LC_ALL=C     # one collation for sort and comm
cc=$1 jobs=$2
shift 2
out=$PWD/linked
rm -rf "$out"
mkdir -p "$out"
table=$out/linked_libraries.c
symbols() {         # the global functions an object defines
  nm -g --defined-only "$1" | awk '$2 == "T" { print $3 }'
}
modules=
for spec; do
  case $spec in
    */\*) found=
          for d in "${spec%/\*}"/*/; do
            if [ -f "$d/Makefile" ]; then d=${d%/} found="$found ${d##*/}=$d"; fi
          done
          [ -n "$found" ] || { echo "postgres-link.sh: no module in $spec" >&2; exit 1; }
          modules="$modules$found" ;;
    *) modules="$modules $spec" ;;
  esac
done
private() {         # private OBJ ARCHIVE...: OBJ with ARCHIVE... linked into it privately
  obj=$1
  shift
  nm -u "$obj" | awk '{ print $2 }' | sort >"$obj.wants"
  nm -g --defined-only "$1" | awk 'NF == 3 { print $3 }' | sort -u >"$obj.has"
  comm -12 "$obj.wants" "$obj.has" >"$obj.takes"
  [ -s "$obj.takes" ] || { echo "postgres-link.sh: $obj takes nothing from $1" >&2; exit 1; }
  ld -r -o "$obj.private" $(sed 's/^/-u /' "$obj.takes") --start-group "$@" --end-group
  objcopy --keep-global-symbols="$obj.takes" "$obj.private"
  ld -r -o "$obj.whole" "$obj" "$obj.private"
  mv "$obj.whole" "$obj"
}
{
  echo '#include <stddef.h>'
  echo 'typedef struct { const char *name; void *address; } LinkedSymbol;'
  echo 'typedef struct { const char *library; const LinkedSymbol *symbols; } LinkedLibrary;'
} >"$table"
objects=
for module in $modules; do
  name=${module%%=*} dir=${module#*=}
  archives=
  case $dir in *+*) archives=${dir#*+} dir=${dir%%+*} ;; esac
  case $dir in
    *.o) make -C "${dir%/*}" "${dir##*/}"
         lib=$dir ;;
    *)   make -j"$jobs" -C "$dir" "$name.so" LINK.shared='gcc -r -nostdlib' LDFLAGS_SL= \
           SHLIB_LINK_INTERNAL= SHLIB_PREREQS=
         lib=$dir/$name.so ;;
  esac
  obj=$out/$name.o
  objcopy --redefine-sym "_PG_init=${name}__PG_init" \
    --redefine-sym "Pg_magic_func=${name}_Pg_magic_func" "$lib" "$obj"
  if [ -n "$archives" ]; then
    # shellcheck disable=SC2086  # the archives are words
    private "$obj" $(echo "$archives" | tr + ' ')
  fi
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
for module in $modules; do
  echo "  { \"${module%%=*}\", ${module%%=*}_symbols }," >>"$table"
done
echo '  { NULL, NULL }' >>"$table"
echo '};' >>"$table"
"$cc" -O2 -c "$table" -o "$out/linked_libraries.o"
# zic first: the backend's make builds it too, and must not link it with these.
make -j"$jobs" -C src/timezone
rm -f src/backend/postgres
make -j"$jobs" -C src/backend all LDFLAGS_EX="$out/linked_libraries.o$objects"
