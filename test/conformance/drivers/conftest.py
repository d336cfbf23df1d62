"""Fixtures of the driver suite: one server for the whole package (the
models share its disks and shares, as drivers on one node do), the caller
and the Wine gap recorder."""
import pytest

from conftest import Caller

from .harness import WINE_PREFIX, WORKING_DIRS, NativeServer, WineCaller, WineGaps, WineServer, fixture_text


@pytest.fixture
def gaps(srv):
    return WineGaps(srv)


@pytest.fixture(scope="package")
def srv(tmp_path_factory):
    if WINE_PREFIX:
        s = WineServer(WINE_PREFIX, fixture_text())
    else:
        base = tmp_path_factory.mktemp("drivers")
        fixture = base / "storage.yaml"
        fixture.write_text(fixture_text())
        s = NativeServer(str(base / "srv"), fixture=str(fixture), working_dirs=WORKING_DIRS)
    yield s
    s.stop()


@pytest.fixture(scope="package")
def call(srv, pb):
    return WineCaller(srv, pb) if srv.wine else Caller(srv, pb)
