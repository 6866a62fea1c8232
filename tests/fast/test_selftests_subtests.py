"""How `ukl selftests` reads a test's subtests from what it printed."""
from ukl.measure import selftests


def test_tap_and_x86_lines_give_each_subtest_its_name_and_result():
    stdout = ("TAP version 13\nok 1 # SKIP CPU 0\nnot ok 2 CPU 1\nok 3 global.kcmp # SKIP no kcmp\n"
              "ok 4 global.mode_strict\n[RUN]\tMOV SS; INT3\n[OK]\tGot SIGTRAP\n[FAIL]\tplain\n")
    assert selftests.subtests(stdout) == [
        ["CPU 0", "skip"], ["CPU 1", "fail"], ["global.kcmp", "skip"],
        ["global.mode_strict", "pass"], ["MOV SS; INT3", "pass"], ["MOV SS; INT3", "fail"]]


def test_a_code_address_in_a_subtests_name_is_no_difference():
    base = {"config": "baseline", "status": 0, "kernel": None,
            "subtests": [["Restart (ip = 0x401a3b)", "pass"]]}
    ukl = {"config": "ukl", "status": 0, "kernel": None,
           "subtests": [["Restart (ip = 0x402573)", "pass"]]}
    assert selftests.differences(ukl, base) == []
    ukl["subtests"][0][1] = "fail"
    assert selftests.differences(ukl, base) == ["Restart (ip = 0x...): pass -> fail"]
