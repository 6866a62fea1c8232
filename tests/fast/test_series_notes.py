"""A patch's notes (our own history, below its first `---`) survive the
round trip from the series to the git tree and back."""
import subprocess

from ukl.build import series


def _git(repo, *args, **kw):
    return subprocess.run([*series.GIT, "-C", str(repo), *args], check=True,
                          capture_output=True, text=True, **kw).stdout


def test_notes_below_the_line_come_back_on_export(tmp_path, monkeypatch):
    repo = tmp_path / "tree"
    repo.mkdir()
    (repo / "f").write_text("one\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "f")
    _git(repo, "commit", "-q", "-m", "upstream")
    _git(repo, "tag", "upstream")
    (repo / "f").write_text("two\n")
    _git(repo, "commit", "-q", "-am", "f: say two\n\nBecause.\n---\nv2: was three.")
    (repo / "f").write_text("three\n")
    _git(repo, "commit", "-q", "-am", "f: say three\n\nNo notes.")
    _git(repo, "format-patch", "-q", "-o", str(tmp_path / "p"), "upstream..HEAD")
    patches = sorted((tmp_path / "p").glob("*.patch"))
    assert series._notes(patches[0]) == "v2: was three." and series._notes(patches[1]) == ""

    monkeypatch.setattr(series, "patches", lambda name: patches)
    series._apply("linux", repo)
    assert _git(repo, "log", "-1", "--format=%B", "HEAD~1").rstrip() == \
        "f: say two\n\nBecause.\n---\nv2: was three."
    assert _git(repo, "log", "-1", "--format=%B", "HEAD").rstrip() == "f: say three\n\nNo notes."
    assert (repo / "f").read_text() == "three\n"
