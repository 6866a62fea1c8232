# testfixture sqlite-suite.tcl DATADIR FILE...: SQLite's test files (in
# test/, beside this script), each as SQLite's own suites run them
# (permutations.test's run_tests: a child interpreter, then its open-file
# and shared-cache checks), with the databases under DATADIR.  Before each
# file: "ukl-suite: start FILE"; after it: "ukl-suite: FILE passed|failed
# ERRORS TESTS".
set argv0 [file normalize $argv0]
set testdir [file dirname $argv0]
set datadir [lindex $argv 0]
set files [lrange $argv 1 end]
# Every file's errors count: tester.tcl stops the run after 1000 by default.
set argv {--maxerror=1000000000}
cd $datadir
source $testdir/permutations.test

puts "ukl-suite: [llength $files] files"
foreach f $files {
  puts "ukl-suite: start $f"
  flush stdout
  set errors [set_test_counter errors]
  set count [set_test_counter count]
  # A script that stops on an error of its own fails; the next one runs with
  # the library's process-wide fault injection and shared cache reset.
  if {[catch { run_tests ukl-suite -prefix "" -files [list $testdir/$f] } msg]} {
    puts "ukl-suite: $f stopped: $msg"
    fail_test $f
    catch { interp delete tinterp }
    catch { sqlite3_enable_shared_cache 0 }
    foreach v {sqlite_io_error_pending sqlite_io_error_persist sqlite_diskfull_pending} {
      catch { set ::$v 0 }
    }
  }
  set errors [expr {[set_test_counter errors] - $errors}]
  set count [expr {[set_test_counter count] - $count}]
  puts "ukl-suite: $f [expr {$errors ? "failed" : "passed"}] $errors $count"
  flush stdout
}
finish_test
