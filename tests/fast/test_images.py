"""Linked images and app builds are stamped steps: superseded ones are reclaimed unless a
process holds them (the boot tier links real ones)."""
import json
import os
import subprocess
import sys

from ukl.build import kernel, recipes, steps


def _image(root, name, stem, ident):
    image = root / name
    image.mkdir()
    (image / "linked.json").write_text(json.dumps({"stem": stem, "flavor": "ukl",
                                                   "kernel": ident}))
    steps.mark(image, "k")
    return image


def test_superseded_images_go_unless_held(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "IMAGES", tmp_path)
    keep = _image(tmp_path, "hello-new", "hello", "k2")
    old = _image(tmp_path, "hello-old", "hello", "k2")           # same program, another object
    held = _image(tmp_path, "hello-held", "hello", "k2")
    stale = _image(tmp_path, "other-stale", "other", "k1")       # an older kernel build
    current = _image(tmp_path, "other-current", "other", "k2")
    legacy = tmp_path / "hello-0123456789abcdef"                 # before the stamps
    legacy.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'w'); "
         "fcntl.flock(f, fcntl.LOCK_SH); print(flush=True); time.sleep(60)",
         str(tmp_path / f".{held.name}.in-use")], stdout=subprocess.PIPE)
    try:
        holder.stdout.readline()
        kernel._prune_images(keep, "hello", "ukl", "k2")
    finally:
        holder.kill()
        holder.wait()
    assert keep.exists() and held.exists() and current.exists() and legacy.exists()
    assert not old.exists() and not stale.exists()


def test_only_the_newest_images_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel, "IMAGES", tmp_path)
    monkeypatch.setattr(kernel, "KEEP_IMAGES", 2)
    images = [_image(tmp_path, f"p{n}-x", f"p{n}", "k") for n in range(4)]
    for n, image in enumerate(images):
        os.utime(image / steps.STAMP, (n, n))
    kernel._prune_images(images[0], "p0", "ukl", "k")
    assert [i.exists() for i in images] == [True, False, True, True]


def test_app_builds_beyond_the_newest_two_of_a_recipe_go_unless_held(tmp_path):
    """App builds are shared by clones under the cache: a recipe's older
    builds go, not another recipe's whose name starts with it, nor one held."""
    def build(name, used):
        path = tmp_path / f"{name}-{used:016x}"
        path.mkdir()
        steps.mark(path, "k")
        os.utime(path / steps.STAMP, (used, used))
        return path
    redis = [build("redis", used) for used in (1, 2, 3, 4)]
    shortcut = build("redis-shortcut", 0)
    steps.hold(redis[0])
    steps.prune(tmp_path, "redis", recipes.KEEP_APP_BUILDS)
    assert [b.exists() for b in redis] == [True, False, True, True] and shortcut.exists()
