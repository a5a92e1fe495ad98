"""A GPU-preferred rung on a platform without GPU workers, in a real Chromium:
the workspace says it runs on the CPU, and the Submit's result says the
GPU-only checks were skipped and names the machine it was graded on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.login import log_in_with_the_form
from tests.browser.test_learner_journey import DESKTOP, GRADING_TIMEOUT_MS, browser, site  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.redis, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]
RUNG = ROOT / "exercises/llm-systems-frontier/inference-and-serving/rungs/07-paged-attention-decode"


def test_a_preferred_gpu_rung_graded_on_the_cpu_says_so(site: str, browser: Any, learner: Any, settings: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    settings.GRADER_GPU_WORKERS = False
    page = browser.new_context(viewport=DESKTOP).new_page()
    page.set_default_timeout(30_000)
    log_in_with_the_form(page, site, "lena", "learner-pass-123", "/rungs/paged-attention-decode/")
    expect(page.locator(".cm-editor")).to_be_visible()
    expect(page.locator("#gpu-notice")).to_contain_text("runs on the CPU, and the GPU-only checks are skipped")

    page.evaluate("code => window.dojoWorkspace.setCode(code)", (RUNG / "reference.py").read_text())
    page.click("#submit-button")
    expect(page.locator("#status")).to_have_class("status passed", timeout=GRADING_TIMEOUT_MS)
    expect(page.locator("#status")).to_contain_text("Ran on CPU; the GPU-only checks were skipped.")
    expect(page.locator("#tests li.test-skipped")).to_have_count(2)
    expect(page.locator("#machine")).to_contain_text("Graded on CPU")
    expect(page.locator("#machine")).to_contain_text("torch 2.13.0")
    expect(page.locator("#machine")).to_contain_text("image llm-dojo-sandbox:cpu-")
