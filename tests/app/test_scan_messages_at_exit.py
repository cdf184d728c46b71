"""The scan worker's messages may arrive while the app is shutting down (a quick quit, a
test leaving ``run_test`` before the first scan ends): each handler then does nothing."""

from __future__ import annotations

from letterbox_tui.app.app import ScanProgress
from tests.app.helpers import SIZE, app_for


async def test_scan_progress_after_the_app_has_gone_is_ignored(letterbox):
    app = app_for(letterbox)
    async with app.run_test(size=SIZE):
        pass
    app.on_scan_progress(ScanProgress("reading the letterbox"))  # raised NoMatches('#topbar')
