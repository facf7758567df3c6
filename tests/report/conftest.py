"""The demo, run once for the report tests that look at its report."""

from __future__ import annotations

import pytest

from tests.conftest import TEST_KEY
from veil.demo import DemoResult, run_demo


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VEIL_KEY", TEST_KEY)  # a fixed key: pseudonyms, hence the release, repeat
        return run_demo(tmp_path_factory.mktemp("demo"))
