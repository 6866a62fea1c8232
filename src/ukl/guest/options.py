"""How to boot a built program: everything but the program and its kernel.

Each feature (guest/features/) declares the options it reads as Option
records: the Options field, its default, and for the command line its
flags, help and parser.  Options is made from those declarations, and so
are the parsers of `ukl run`, `ukl image` and `ukl oci` (cli.add_options)."""
import argparse
import copy
import dataclasses
from dataclasses import dataclass
from typing import Callable

from ..errors import UklError

DEFAULT_TIMEOUT = 180.0


@dataclass(frozen=True)
class Option:
    name: str                      # the Options field
    default: object = None         # copied for each Options (a list stays its own)
    flags: tuple = ()              # command-line flags; none: the API's alone
    help: str = ""
    parse: Callable | None = None  # one command-line word -> its value (UklError if bad)
    many: bool = False             # repeatable: the field is a list of parsed words
    switch: bool = False           # a flag without a value
    metavar: str | None = None
    commands: tuple = ("run",)     # the commands that offer it on the command line

    def add_to(self, parser: argparse.ArgumentParser):
        if not self.flags:
            return
        kw = {"dest": self.name, "help": self.help}
        if self.switch:
            parser.add_argument(*self.flags, action="store_true", **kw)
            return
        if self.parse:
            kw["type"] = argparse_type(self.parse)
        parser.add_argument(*self.flags, metavar=self.metavar,
                            action="append" if self.many else "store",
                            default=[] if self.many else self.default, **kw)


def argparse_type(parse):
    """PARSE as argparse's type: its UklError becomes argparse's one-line error."""
    def convert(text):
        try:
            return parse(text)
        except UklError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    convert.__name__ = parse.__name__
    return convert


def duration(unit: str):
    """A parser of a positive, finite number of UNIT (seconds, minutes)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value < float("inf"):
            raise UklError(f"must be a positive number of {unit}, not {text!r}")
        return value
    return parse


# What every boot has, beside the features' options.
BASE = [
    Option("args", ()),                      # the program's arguments; () for the recipe's
    Option("timeout", None),                 # seconds; None: DEFAULT_TIMEOUT (none with gdb)
    Option("tools", {}),                     # name -> ordinary executable (bytes) for /bin
    Option("checked", False),                # validate() passed (api.validate)
]


def make(declared: list[Option]):
    """The Options dataclass with these fields, in this order, each defaulting to its own copy."""
    names = [o.name for o in declared]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise RuntimeError(f"option {twice[0]} is declared twice")
    fields = [(o.name, object, dataclasses.field(
        default_factory=(lambda d=o.default: copy.copy(d)),
        compare=o.name != "checked")) for o in declared]
    return dataclasses.make_dataclass("Options", fields, frozen=True,
                                      namespace={"__module__": __name__})
