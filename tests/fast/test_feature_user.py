"""--user: the program runs as a user, by name or number, as Docker takes it."""
import pytest

from ukl import api
from ukl.build import programs
from ukl.errors import UklError
from ukl.guest.features import user


@pytest.mark.parametrize("spec,ids", [("65534", (65534, 65534)), ("nobody", (65534, 65534)),
                                      ("1000", (1000, 1000)), ("1000:nogroup", (1000, 65534)),
                                      ("nobody:0", (65534, 0)), ("root", (0, 0))])
def test_names_and_numbers_resolve_as_docker_resolves_them(spec, ids):
    assert user.resolve(spec) == ids


@pytest.mark.parametrize("spec,error", [("mysql", "no user 'mysql'"),
                                        ("1:wheel", "no group 'wheel'"),
                                        ("4294967295", "up to 4294967294")])
def test_unknown_names_are_refused_before_anything_is_built(spec, error):
    with pytest.raises(UklError, match=error):
        api.validate(api.Options(user=spec), "ukl")


def test_a_ukl_program_becomes_the_user_in_its_c_library(guest):
    command = guest(api.Options(user="nobody"), config="ukl-ret-byp").command
    assert "UKL_USER=65534:65534:65534" in command and "ukl-user" not in command


def test_an_ordinary_program_is_started_as_the_user(guest, monkeypatch, tmp_path):
    helper = tmp_path / "ukl-user"
    helper.write_bytes(b"\x7fELF helper")
    monkeypatch.setattr(programs, "build", lambda program, config: helper)
    g = guest(api.Options(user="1000:nogroup"), config="baseline")
    assert "/bin/ukl-user 1000 65534 65534 /app/p" in g.command
    assert "UKL_USER" not in g.command and g.files["bin/ukl-user"][1] == b"\x7fELF helper"
