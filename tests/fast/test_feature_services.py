"""Services: commands started in the background before the program."""
from ukl import api


def test_services_start_before_the_program(guest):
    setup = guest(api.Options(services=[["/bin/probe", "9999"]])).hooks("setup")
    assert setup == "/bin/probe 9999 </dev/null >/dev/null 2>&1 &\n"
