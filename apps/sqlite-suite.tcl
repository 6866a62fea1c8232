# testfixture sqlite-suite.tcl DATADIR NAME...: SQLite's test files, each as
# its own suites run them (permutations.test's run_tests: a child
# interpreter, then its open-file and shared-cache checks), in DATADIR.
# A NAME is a test file (wal.test) or a suite of permutations.test
# (veryquick).  Before each file: "ukl-suite: start FILE"; after it:
# "ukl-suite: FILE passed|failed ERRORS TESTS".  This script goes in test/,
# where tester.tcl finds the rest from $argv0.
set argv0 [file normalize $argv0]
set testdir [file dirname $argv0]
set datadir [lindex $argv 0]
set names [lrange $argv 1 end]
set argv {}
cd $datadir
source $testdir/permutations.test

set top [file dirname $testdir]
proc display {f} {
  foreach dir [list $::testdir $::top] {
    if {[string first $dir/ $f] == 0} { return [string range $f [string length $dir/] end] }
  }
  return $f
}
set files {}
foreach name $names {
  if {[info exists ::testspec($name)]} {
    array set spec $::testspec($name)
    foreach f [lsort $spec(-files)] { lappend files [display [file normalize $f]] }
  } else {
    lappend files $name
  }
}
puts "ukl-suite: [llength $files] files"
foreach f $files {
  puts "ukl-suite: start $f"
  flush stdout
  set errors [set_test_counter errors]
  set count [set_test_counter count]
  set path [expr {[file exists $testdir/$f] ? "$testdir/$f" : "$top/$f"}]
  # A script that stops on an error of its own fails, and the next one runs.
  if {[catch { run_tests ukl-suite -prefix "" -files [list $path] } msg]} {
    puts "ukl-suite: $f stopped: $msg"
    fail_test $f
    catch { interp delete tinterp }
    foreach k {name prefix dbconfig presql} { unset -nocomplain ::G(perm:$k) }
  }
  set errors [expr {[set_test_counter errors] - $errors}]
  set count [expr {[set_test_counter count] - $count}]
  puts "ukl-suite: $f [expr {$errors ? "failed" : "passed"}] $errors $count"
  flush stdout
}
finish_test
