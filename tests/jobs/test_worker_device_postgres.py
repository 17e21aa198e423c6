"""A worker says what it embeds with before it takes jobs: model, runtime and the device the
embedding library chose (a GPU host's worker says it embeds on the GPU), and `status` shows the
same device once the model is loaded.
"""

import pytest

from ragbench.workbench import Workbench
from tests.conftest import postgres_settings

pytestmark = pytest.mark.integration


def test_a_worker_says_what_it_embeds_with(postgres_url, tmp_path):
    from sentence_transformers.util import get_device_name

    wb = Workbench(tmp_path / "ws", postgres_settings(postgres_url, embedding_runtime="torch"))
    before = wb.maintenance.backend_status().embedding
    assert before.device == "auto" and "device auto (the library's choice" in before.message
    lines: list[str] = []
    report = wb.jobs.work(once=True, ready=lines.append)
    model, _, device = report.embedding.partition(" on ")
    assert model == "all-MiniLM-L6-v2 (torch)"
    assert device.split(":")[0] == get_device_name().split(":")[0]  # the library's choice
    assert lines == [f"{report.name}: embeds with {report.embedding}; waiting for jobs"]
    assert (report.ran, report.failed) == (0, 0)
    after = wb.maintenance.backend_status().embedding
    assert after.device == device and f"device {device}" in after.message
