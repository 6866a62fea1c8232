"""--kernel-arg: words for the kernel's command line, after the configuration's."""
import pytest

from ukl import api
from ukl.errors import UklError
from ukl.guest.features import kernel_args


def test_kernel_args_follow_the_configuration_s(guest):
    argv = guest(api.Options(kernel_args=["lockdown=integrity", "isolcpus=1"]),
                 config="ukl-byp").argv
    assert argv[argv.index("-append") + 1] == ("console=ttyS0 panic=-1 oops=panic ukl=byp "
                                               "lockdown=integrity isolcpus=1")


def test_a_kernel_arg_is_one_word_without_quotes():
    assert kernel_args.word("lockdown=integrity") == "lockdown=integrity"
    for bad in ('dyndbg="file x +p"', "a b", ""):
        with pytest.raises(UklError, match="one word"):
            kernel_args.word(bad)
    with pytest.raises(UklError, match="one word"):
        api.validate(api.Options(kernel_args=["a b"]), "ukl")
