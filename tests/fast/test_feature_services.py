"""Services: commands started in the background before the program."""
from ukl import api


def test_services_start_before_the_program(guest):
    setup = guest(api.Options(services=[["/bin/probe", "9999"]])).hooks("setup")
    assert setup == "/bin/probe 9999 </dev/null >/dev/null 2>&1 &\n"


def test_prepare_runs_in_the_program_s_directory_before_it(guest):
    setup = guest(api.Options(prepare="mkdir subdir\ntouch script")).hooks("setup")
    assert "(cd /tmp && {\nmkdir subdir\ntouch script\n})\n" in setup
    assert "cd /tmp" not in guest(api.Options()).hooks("setup")
