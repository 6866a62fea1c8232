"""--append: kernel arguments from the command line, after the configuration's."""
import pytest

from ukl import api
from ukl.errors import UklError
from ukl.guest.features import append


def test_appended_words_follow_the_configuration_s(guest):
    argv = guest(api.Options(kernel_args=["lockdown=integrity", "isolcpus=1"]),
                 config="ukl-byp").argv
    assert argv[argv.index("-append") + 1] == ("console=ttyS0 panic=-1 oops=panic ukl=byp "
                                               "lockdown=integrity isolcpus=1")


def test_an_append_value_is_split_into_words_and_quotes_are_refused():
    assert append.words(" lockdown=integrity  isolcpus=1 ") == ["lockdown=integrity",
                                                                 "isolcpus=1"]
    with pytest.raises(UklError, match="without quotes"):
        append.words('dyndbg="file x +p"')
    with pytest.raises(UklError, match="one word"):
        api.validate(api.Options(kernel_args=["a b"]), "ukl")
