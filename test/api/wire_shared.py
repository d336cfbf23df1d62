"""Where the shared fact sheet WIRE-API.md is.

The fact sheet is not part of this repository: it lives in the project's
shared folder, which sits beside the project root (<root>/../shared/api/
WIRE-API.md). A clone made elsewhere (git clone /work/main /tmp/x) finds it
beside its origin when the origin is a local path. Looked at, in order:

  1. $CSI_PROXY_SHARED/api/WIRE-API.md when CSI_PROXY_SHARED is set (the
     shared folder itself); when set, it is the only place looked at, and a
     missing file there is an error, not a skip: the override is wrong;
  2. <repo root>/../shared/api/WIRE-API.md;
  3. <origin>/../shared/api/WIRE-API.md for git's remote.origin.url when it
     is a local path (plain, file://, or relative to the repo root), and
     again for that repository's own origin, up to 4 hops.

When none has it, test_table_in_sync_with_wire_doc is skipped, with the
places tried as the reason (printed in the run's summary by conftest.py),
unless CSI_PROXY_SHARED_REQUIRED=1, which turns that skip into a failure
(for a CI job that is meant to have the shared folder).

Run `python3 test/api/wire_shared.py` to print what it finds.
"""

import os
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
DOC = os.path.join("api", "WIRE-API.md")
MAX_HOPS = 4

# Why the last lookup found nothing (conftest.py prints it at the end).
missing_reason = None


def _origin_path(repo):
    """The local path of repo's remote.origin.url, or None."""
    try:
        proc = subprocess.run(["git", "-C", repo, "config", "--get", "remote.origin.url"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    url = proc.stdout.strip()
    if proc.returncode != 0 or not url:
        return None
    if url.startswith("file://"):
        url = urllib.parse.unquote(urllib.parse.urlparse(url).path)
    elif "://" in url or (":" in url.split("/")[0] and not os.path.isabs(url)):
        return None  # a network remote (https://, ssh://, host:path)
    path = os.path.normpath(os.path.join(repo, url))
    if os.path.basename(path) == ".git":
        path = os.path.dirname(path)
    return path if os.path.isdir(path) else None


def candidates(repo_root=REPO_ROOT):
    """[(place, path)] in the order find_wire_doc() tries them."""
    env = os.environ.get("CSI_PROXY_SHARED")
    if env:
        return [("$CSI_PROXY_SHARED", os.path.join(env, DOC))]
    out = [("beside the repo root", os.path.join(repo_root, "..", "shared", DOC))]
    repo, seen = repo_root, {os.path.realpath(repo_root)}
    for _ in range(MAX_HOPS):
        origin = _origin_path(repo)
        if origin is None or os.path.realpath(origin) in seen:
            break
        seen.add(os.path.realpath(origin))
        out.append(("beside origin %s" % origin, os.path.join(origin, "..", "shared", DOC)))
        repo = origin
    return out


def find_wire_doc(repo_root=REPO_ROOT):
    """The path of WIRE-API.md, or None (missing_reason then says why)."""
    global missing_reason
    tried = candidates(repo_root)
    for _place, path in tried:
        if os.path.isfile(path):
            missing_reason = None
            return os.path.normpath(path)
    missing_reason = ("shared fact sheet WIRE-API.md not found (tried: %s); "
                      "set CSI_PROXY_SHARED to the shared folder"
                      % "; ".join("%s: %s" % (p, os.path.normpath(x)) for p, x in tried))
    return None


def wire_doc_or_skip():
    """For tests: the path, else pytest.skip (or pytest.fail, see above)."""
    import pytest
    path = find_wire_doc()
    if path is not None:
        return path
    if os.environ.get("CSI_PROXY_SHARED"):
        pytest.fail("CSI_PROXY_SHARED is set but " + missing_reason, pytrace=False)
    if os.environ.get("CSI_PROXY_SHARED_REQUIRED") == "1":
        pytest.fail("CSI_PROXY_SHARED_REQUIRED=1 and " + missing_reason, pytrace=False)
    pytest.skip(missing_reason)


if __name__ == "__main__":
    found = find_wire_doc()
    print(found if found else missing_reason)
    sys.exit(0 if found else 1)
