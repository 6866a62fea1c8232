"""-e NAME=VALUE and a recipe's [run] table: the program's variables, its
user, its setup script and its stop signal, as a Docker image's config and
`docker run -e` give them."""
import pytest

from ukl import api
from ukl.build import programs, recipes
from ukl.errors import UklError
from ukl.guest import qemu
from ukl.guest.features import entrypoint, environment

HEAD = 'description = "x"\nsource = "redis"\nsteps = [["make"]]\nbinary = "s"\nports = [1]\n'


def recipe_program(run: str) -> programs.Program:
    return programs.Program("recipe", "s", recipe=recipes.parse("s", HEAD + run))


def test_variables_reach_the_program_and_the_setup_hooks(guest):
    g = guest(api.Options(env=(("POSTGRES_PASSWORD", "it's secret"), ("EMPTY", ""))))
    assert "'POSTGRES_PASSWORD=it'\"'\"'s secret'" in g.command and "EMPTY=" in g.command
    assert g.script().index("export POSTGRES_PASSWORD") < g.script().index("env -i")
    assert "export" not in guest().hooks("setup")


def test_the_recipes_run_table_is_the_default_and_e_overrides_it(guest):
    program = recipe_program('\n[run]\nenv = { PGDATA = "/d", A = "1" }\nuser = "postgres"\n'
                             'setup = "postgres-entrypoint.sh"\nstop_signal = "INT"\n')
    g = guest(api.Options(env=(("A", "2"),), stop=qemu.Stop("s", 10)), program=program)
    assert "PGDATA=/d" in g.command and "A=2" in g.command and "A=1" not in g.command
    assert "UKL_USER=999:999:999" in g.command
    assert 'kill -s INT "$(cat' in g.hooks("setup")
    assert g.script().index("export PGDATA") < g.script().index("initdb")
    assert g.files[f"etc/ukl/setup.d/{entrypoint.HOOK}"][1] == \
        (recipes.APPS / "postgres-entrypoint.sh").read_bytes()
    assert "UKL_USER=0" in guest(api.Options(user="root"), program=program).command


def test_the_run_table_stays_out_of_the_build_key():
    text = HEAD + '\n# How it runs.\n[run]\nuser = "nobody"\n\n[bench]\nclient = "http"\n' \
                  'tests = ["get"]\n'
    assert recipes.build_text(text) == HEAD
    assert recipes.parse("ok", text).run.user == "nobody"


@pytest.mark.parametrize("run,error", [
    ('[run]\nshell = "sh"', r"recipe bad: \[run\]: unknown key 'shell'; valid: user, env, "
                            "setup, stop_signal"),
    ('[run]\nenv = { "1A" = "x" }', "env must map variable names to strings"),
    ('[run]\nenv = { A = 1 }', "env must map variable names to strings"),
    ('[run]\nsetup = "missing.sh"', r"setup 'missing.sh' is not a file under apps/"),
    ('[run]\nstop_signal = "SIGINT"', "stop_signal must be a signal's name"),
    ('[run]\nuser = ""', "user must be a user's name or number"),
    ('[run]\nuser = "x"\n[files]\n"/a" = "a"', r"\[run\] must be a table, the last one"),
    ('[run]\nuser = "x"\n[bench]\nclient = "http"\ntests = ["get"]\n[files]\n"/a" = "a"',
     r"\[run\] and \[bench\] must be tables, the last ones in the file"),
])
def test_a_malformed_run_table_is_refused_in_one_line(run, error):
    with pytest.raises(UklError, match=error):
        recipes.parse("bad", HEAD + run + "\n")


@pytest.mark.parametrize("text", ["A", "=x", "1A=x", "A B=x"])
def test_a_malformed_e_is_refused(text):
    with pytest.raises(UklError, match="expected NAME=VALUE"):
        environment.parse(text)
    assert environment.parse("A=b=c") == ("A", "b=c")
