"""The API's driver: a command run in the program's place, given its command line."""
from ukl import api


def test_the_driver_is_given_the_programs_command_line(guest):
    g = guest(api.Options(driver=("sh", "/suite/run.sh", "TREE"), args=("x",)))
    assert g.command.endswith(" sh /suite/run.sh TREE /app/p x\n")
    assert " sh /suite/run.sh" not in guest().command
