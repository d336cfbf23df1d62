"""wire_shared.find_wire_doc: a clean clone anywhere finds the shared fact
sheet beside its origin; an unreachable one says where it looked."""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire_shared  # noqa: E402
sys.path.pop(0)


def git(*args, cwd=None):
    subprocess.run(["git"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """tmp/proj/{main (a git repo), shared/api/WIRE-API.md}."""
    monkeypatch.delenv("CSI_PROXY_SHARED", raising=False)
    proj = tmp_path / "proj"
    (proj / "shared" / "api").mkdir(parents=True)
    (proj / "shared" / "api" / "WIRE-API.md").write_text("facts\n")
    main = proj / "main"
    main.mkdir()
    git("init", "-q", str(main))
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
        "-m", "x", cwd=str(main))
    return proj


def test_beside_repo_root(project):
    assert wire_shared.find_wire_doc(str(project / "main")) == \
        os.path.normpath(str(project / "shared" / "api" / "WIRE-API.md"))


@pytest.mark.parametrize("url_form", ["plain", "file", "relative"])
def test_clone_elsewhere_finds_it_beside_origin(project, tmp_path, url_form):
    clone = tmp_path / "elsewhere" / "x"
    git("clone", "-q", str(project / "main"), str(clone))
    url = {"plain": str(project / "main"), "file": "file://" + str(project / "main"),
           "relative": os.path.relpath(str(project / "main"), str(clone))}[url_form]
    git("remote", "set-url", "origin", url, cwd=str(clone))
    assert wire_shared.find_wire_doc(str(clone)) == \
        os.path.normpath(str(project / "shared" / "api" / "WIRE-API.md"))


def test_clone_of_a_clone(project, tmp_path):
    a, b = tmp_path / "a" / "x", tmp_path / "b" / "y"
    git("clone", "-q", str(project / "main"), str(a))
    git("clone", "-q", str(a), str(b))
    assert wire_shared.find_wire_doc(str(b)) is not None


def test_not_found_names_every_place_tried(project, tmp_path):
    clone = tmp_path / "elsewhere" / "x"
    git("clone", "-q", str(project / "main"), str(clone))
    git("remote", "set-url", "origin", "https://example.invalid/csi-proxy.git", cwd=str(clone))
    assert wire_shared.find_wire_doc(str(clone)) is None
    assert str(tmp_path / "elsewhere" / "shared") in wire_shared.missing_reason
    assert "CSI_PROXY_SHARED" in wire_shared.missing_reason


def test_env_override_is_the_only_place(project, tmp_path, monkeypatch):
    monkeypatch.setenv("CSI_PROXY_SHARED", str(project / "shared"))
    assert wire_shared.find_wire_doc(str(tmp_path)) is not None
    monkeypatch.setenv("CSI_PROXY_SHARED", str(tmp_path / "nowhere"))
    assert wire_shared.find_wire_doc(str(project / "main")) is None
