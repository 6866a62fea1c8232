"""The docs against the code and the patch series (docs_check.py): each check
passes on the project, and each finds one thing changed by hand in a copy."""
import shutil
import subprocess
from pathlib import Path

import pytest

import docs_check
from ukl.measure.selftests import TESTS

ROOT = Path(__file__).resolve().parents[2]
CHECKS = [docs_check.patch_table, docs_check.patch_count, docs_check.selftest_count,
          docs_check.client_docs, docs_check.links, docs_check.result_dirs,
          docs_check.shared]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_docs_agree_with_the_code_and_the_series(check):
    assert check(ROOT) == []


@pytest.fixture
def copy(tmp_path) -> Path:
    """The project's files (no .git), in a directory of their own."""
    names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True, text=True,
                           check=True).stdout.split("\0")
    for name in names:
        if name and (ROOT / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tmp_path / name)
    assert docs_check.check(tmp_path) == []
    return tmp_path


def edit(path: Path, old: str, new: str):
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def test_a_wrong_subject_in_the_patch_table_is_found(copy):
    subject = docs_check.patches(copy)[7][2]
    edit(copy / "kernel/README.md", f"| 7 | `{subject}` |", "| 7 | `ptrace: something else` |")
    assert docs_check.check(copy) == [
        f"kernel/README.md: row 7 says `ptrace: something else`, the patch's subject is "
        f"`{subject}`"]


def test_a_missing_row_in_the_patch_table_is_found(copy):
    text = (copy / "kernel/README.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| 7 |"))
    edit(copy / "kernel/README.md", row + "\n", "")
    assert docs_check.check(copy) == ["kernel/README.md: patch 7 has 0 rows"]


def test_a_wrong_selftest_count_is_found(copy):
    n = len(TESTS)
    edit(copy / "README.md", f"kselftests ({n} of them", f"kselftests ({n - 1} of them")
    assert docs_check.check(copy) == [
        f"README.md: says {n - 1} kselftests; selftests.TESTS has {n}"]


def test_a_wrong_patch_count_is_found(copy):
    n = len(docs_check.patches(copy))
    edit(copy / "kernel/patches/0000-cover-letter.patch", f"[PATCH 00/{n}]",
         f"[PATCH 00/{n + 1}]")
    assert docs_check.check(copy) == [
        f"kernel/patches/0000-cover-letter.patch: [PATCH 0/{n + 1}], but it is patch 0 of {n}"]


@pytest.mark.parametrize("doc", ["README.md", "docs/results.md"])
def test_wrk_named_as_the_nginx_client_is_found(copy, doc):
    edit(copy / doc, "`http.client`", "`wrk`")
    assert docs_check.check(copy) == [
        f"{doc}: names ['wrk'] as nginx's bench client; its code uses ['http.client']"]


def test_a_broken_anchor_is_found(copy):
    edit(copy / "README.md", "(docs/results.md#the-base-model)", "(docs/results.md#the-base)")
    assert docs_check.check(copy) == [
        "README.md: link docs/results.md#the-base: no such heading in docs/results.md"]


def test_a_link_to_a_missing_file_is_found(copy):
    edit(copy / "README.md", "(kernel/README.md)", "(kernel/READ.md)")
    assert docs_check.check(copy) == ["README.md: link kernel/READ.md: no such file"]


def test_a_cited_result_directory_is_found(copy):
    doc = copy / "docs/results.md"
    doc.write_text(doc.read_text() + "\nMeasured in `out/bench/20261130-101010/table.md`.\n")
    line = len(doc.read_text().splitlines())
    assert docs_check.check(copy) == [
        f"docs/results.md:{line}: cites out/bench/20261130-101010"]


@pytest.mark.parametrize("shared", docs_check.SHARED)
def test_a_mention_of_the_shared_directory_is_found(copy, shared):
    with open(copy / "setup.sh", "a") as f:
        f.write(f"# the sources are in {shared}/src\n")
    assert docs_check.check(copy) == [f"setup.sh: mentions {shared}"]


def test_a_design_md_over_its_length_is_found(copy):
    doc = copy / "docs/design.md"
    lines = len(doc.read_text().splitlines())
    doc.write_text(doc.read_text() + "more\n" * (docs_check.DESIGN_LINES + 1 - lines))
    assert docs_check.check(copy) == [
        f"docs/design.md: {docs_check.DESIGN_LINES + 1} lines, over {docs_check.DESIGN_LINES}"]
